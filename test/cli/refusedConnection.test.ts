// The `holdfast` command line (a real process: node + tsx on src/cli/main.ts) with nothing listening at
// HOLDFAST_URL: it exits 69 within a second of its first request, naming the URL and "connection refused".
import { spawn } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { EXIT } from "../../src/cli/exitCodes";
import { closedPort } from "../support/closedPort";

const MAIN = path.resolve("src/cli/main.ts");
/**
 * Loaded before the CLI (node --import): notes when the CLI first calls fetch and, at exit, how long ago
 * that was, so the bound below is on the CLI's work after its first request, not on starting Node and tsx.
 * It passes every call on unchanged.
 */
const TIMER = `data:text/javascript,${encodeURIComponent(`
const real = globalThis.fetch;
let first;
globalThis.fetch = (...args) => { first ??= performance.now(); return real(...args); };
process.on("exit", () => process.stderr.write("first request to exit: " + (first === undefined ? "none" : Math.round(performance.now() - first)) + " ms\\n"));
`)}`;
const WITHIN_MS = 1000;

for (const args of [
  ["run", "--lock", "nightly-report", "--", "true"],
  ["run", "--once", "export-42", "--wait", "10s", "--", "true"],
]) {
  it(`holdfast ${args.slice(0, 2).join(" ")}: nothing listening exits ${EXIT.unavailable} within 1 s naming the URL and "connection refused"`, async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const child = spawn(process.execPath, ["--import", TIMER, "--import", "tsx", MAIN, ...args], {
      env: { ...process.env, HOLDFAST_URL: url, HOLDFAST_API_KEY: "holdfast-local-dev-key" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(status, stderr).toBe(EXIT.unavailable);
    expect(stderr).toContain(`holdfast: no answer from ${url}: connection refused`);
    const took = Number(/first request to exit: (\d+) ms/.exec(stderr)?.[1]);
    expect(took, stderr).toBeLessThan(WITHIN_MS);
  });
}
