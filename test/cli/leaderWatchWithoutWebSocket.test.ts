// `holdfast leader NAME --watch` on a Node without WebSocket (Node 20, the machine's on Debian 12):
// a usage error that says so, before anything is printed or sent. It was the current leader on
// stdout, then "unexpected error: watch needs a WebSocket: ... (pass one as WebSocket)", exit 70,
// which named the client's option, not anything a command-line user can do (issue 54).
import { spawnSync } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { EXIT } from "../../src/cli/exitCodes";
import { closedPort } from "../support/closedPort";

it("leader --watch on a Node without WebSocket exits 64 naming the Node and what to do, with nothing on stdout", async () => {
  // Nothing listens at HOLDFAST_URL: a request sent would exit 69 (unavailable), not 64.
  const url = `http://127.0.0.1:${await closedPort()}`;
  // Node 22+ without its WebSocket, as Node 20 is.
  const run = spawnSync(
    process.execPath,
    ["--no-experimental-websocket", "--import", "tsx", path.resolve("src/cli/main.ts"), "leader", "orders", "--watch"],
    {
      env: { ...process.env, HOLDFAST_URL: url, HOLDFAST_API_KEY: "holdfast-local-dev-key" },
      encoding: "utf8",
    },
  );
  expect(run.status, run.stderr).toBe(EXIT.usage);
  expect(run.stderr).toMatch(/^holdfast: leader --watch: this Node \(v[\d.]+\) has no WebSocket, .*Node 22\+, or leave out --watch/);
  expect(run.stdout).toBe("");
});
