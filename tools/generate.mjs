#!/usr/bin/env node
// What the Worker needs generated before it is bundled or tested: the Lua scripts
// (tools/gen-lua-scripts.mjs -> src/store/redis/scripts.generated.ts), then the OpenAPI
// document (tools/gen-openapi.mts -> console/openapi.json and src/http/openapi/openapi.generated.ts), whose modules import the scripts.
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const tools = dirname(fileURLToPath(import.meta.url));
execFileSync(process.execPath, [join(tools, "gen-lua-scripts.mjs")], { stdio: "inherit" });
execFileSync(process.execPath, ["--import", "tsx", join(tools, "gen-openapi.mts")], { stdio: "inherit", cwd: join(tools, "..") });
