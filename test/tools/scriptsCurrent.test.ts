// A contributor edits a script in lua/ and runs one test file with `npx vitest run <file>`:
// the test must run the edited script, never the copy generated before the edit
// (src/store/redis/scripts.generated.ts, which outlives the edit). Shown in a copy of the
// project whose generated scripts are already there, as they are after any earlier run:
// the copy's lua/mutex/inspect.lua is edited, and one test file run by vitest, as a
// contributor runs it, sends the embedded script to the test stack's real Redis.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";

const root = path.resolve(".");
const copy = mkdtempSync(path.join(tmpdir(), "holdfast-scripts-current-"));

afterAll(() => rmSync(copy, { recursive: true, force: true }));

/** What vitest and the generator read; the generated files come along, as a contributor's tree has them. */
const PROJECT = ["src", "lua", "tools", "console", "test/setup", "vitest.config.ts", "package.json", "tsconfig.json", "wrangler.toml"];

const MARK = "holdfast test: the edited inspect script ran";

/** The probe: the embedded mutex inspect script, sent as is to Redis; the edit makes it fail with MARK. */
const PROBE = `
import { Redis } from "@upstash/redis";
import { expect, inject, it } from "vitest";
import { luaScripts, plainScript } from "../src/store/redis/scripts.generated";

it("runs the script as lua/ has it now", async () => {
  const redis = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") });
  await expect(redis.eval(plainScript(luaScripts.mutex_inspect), ["hf:{mx:probe:probe}"], [])).rejects.toThrow(${JSON.stringify(MARK)});
});
`;

function vitestIn(dir: string, file: string): Promise<{ code: number | null; output: string }> {
  const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
  const child = spawn(process.execPath, [vitest, "run", "--project", "node", file], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, output })));
}

it("one test file run after an edit to lua/ runs the edited script", async () => {
  for (const entry of PROJECT) cpSync(path.join(root, entry), path.join(copy, entry), { recursive: true });
  symlinkSync(path.join(root, "node_modules"), path.join(copy, "node_modules"), "dir");
  const generated = readFileSync(path.join(copy, "src/store/redis/scripts.generated.ts"), "utf8");
  expect(generated).not.toContain(MARK);

  const script = path.join(copy, "lua/mutex/inspect.lua");
  const edited = readFileSync(script, "utf8").replace("local now_ms = redis_now()", `error(${JSON.stringify(MARK)})\nlocal now_ms = redis_now()`);
  expect(edited).toContain(MARK);
  writeFileSync(script, edited);
  writeFileSync(path.join(copy, "test/probe.test.ts"), PROBE);

  const run = await vitestIn(copy, "test/probe.test.ts");
  expect(run.output).toContain("1 passed");
  expect(run.code).toBe(0);
}, 120_000);
