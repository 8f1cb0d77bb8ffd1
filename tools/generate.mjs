#!/usr/bin/env node
// Every generated source file, before test, start, bench, build and deploy:
// the Lua scripts (src/store/redis/scripts.generated.ts) and the console's
// files (src/http/consoleAssets.generated.ts). Each generator does its work
// when imported and writes its file only when the text changed, so running
// this often costs no rebuilds.
import "./gen-lua-scripts.mjs";
import "./gen-console-assets.mjs";
