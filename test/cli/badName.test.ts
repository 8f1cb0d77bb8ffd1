// The `holdfast` command line (a real process) refuses a name over 200 characters before it sends
// anything, saying it is too long and how long it is: exit 64 (usage), as the service would answer.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { EXIT } from "../../src/cli/exitCodes";
import { closedPort } from "../support/closedPort";

it("holdfast status with a name of 250 characters exits 64: too long (250)", async () => {
  // Nothing listens at HOLDFAST_URL: a request sent would exit 69 (unavailable), not 64.
  const url = `http://127.0.0.1:${await closedPort()}`;
  const run = spawnSync(process.execPath, ["--import", "tsx", path.resolve("src/cli/main.ts"), "status", "n".repeat(250)], {
    env: { ...process.env, HOLDFAST_URL: url, HOLDFAST_API_KEY: "holdfast-local-dev-key" },
    encoding: "utf8",
  });
  expect(run.status, run.stderr).toBe(EXIT.usage);
  expect(run.stderr).toBe("holdfast: the request was refused: names are at most 200 characters; this one is too long (250) (invalid_name)\n");
});
