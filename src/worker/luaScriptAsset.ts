import { InternalError, NotConfiguredError } from "../errors.js";
import type { ScriptTexts } from "../store/redis/ScriptRunner.js";
import { luaScriptSha1 } from "../store/redis/scripts.generated.js";

/** The texts as tools/gen-lua-scripts.mjs wrote them to the static assets, by SHA-1; read once per isolate. */
let texts: { assets: Fetcher; bySha1: Promise<Record<string, string>> } | undefined;

/**
 * The Worker's scripts' texts, from its static assets (console/lua-scripts.json,
 * through the ASSETS binding the console and the OpenAPI document come through
 * too), not from its bundle: they were about 12 KiB of its 100 KiB gzip budget
 * (issue 54), and a script's text is needed only when Redis lacks the script.
 * Asked by SHA-1, so assets of another build than the bundle's say so rather
 * than run another script. Not served to anyone: the console passes out only
 * its own types of file.
 */
export function luaScriptsFromAssets(assets: Fetcher | undefined): ScriptTexts {
  return async (name) => {
    if (!assets) throw new NotConfiguredError("the Lua scripts are not bound (wrangler.toml [assets], binding ASSETS)");
    if (texts?.assets !== assets) {
      const bySha1 = readTexts(assets);
      texts = { assets, bySha1 };
      // A failed read is tried again by the next script that needs it.
      bySha1.catch(() => {
        if (texts?.bySha1 === bySha1) texts = undefined;
      });
    }
    const text = (await texts.bySha1)[luaScriptSha1[name]];
    if (text === undefined) {
      throw new InternalError(`the Lua script ${name} of this build is missing from the static assets: run node tools/generate.mjs before bundling`);
    }
    return text;
  };
}

async function readTexts(assets: Fetcher): Promise<Record<string, string>> {
  const res = await assets.fetch("https://assets.invalid/lua-scripts.json");
  if (!res.ok)
    throw new InternalError(`the Lua scripts are missing from the static assets (${res.status}): run node tools/generate.mjs before bundling`);
  return (await res.json()) as Record<string, string>;
}
