import type { ScriptTexts } from "./ScriptRunner.js";
import { luaScripts } from "./scripts.generated.js";

/** The scripts' texts from the generated module, which the library carries (the Worker reads its own from its static assets). */
export const moduleScriptTexts: ScriptTexts = (name) => luaScripts[name];
