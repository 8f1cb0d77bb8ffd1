// `holdfast force-release` (a real process) takes every kind the service can force-release, and its
// --help and its refusal of idempotency keys name each of them: a flow limit's and an election's
// force release worked while --help offered only mutex|rwlock|semaphore (issue 54).
import { spawnSync } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { EXIT } from "../../src/cli/exitCodes";
import { LEASE_KINDS } from "../../src/client/lease";
import { closedPort } from "../support/closedPort";

function holdfast(url: string, args: string[]) {
  return spawnSync(process.execPath, ["--import", "tsx", path.resolve("src/cli/main.ts"), ...args], {
    env: { ...process.env, HOLDFAST_URL: url, HOLDFAST_API_KEY: "holdfast-local-dev-key" },
    encoding: "utf8",
  });
}

it("force-release's --help and its usage error name exactly the kinds it takes", { timeout: 60_000 }, async () => {
  // Nothing listens at HOLDFAST_URL: a kind it takes is sent (exit 69, unavailable); one it refuses is 64 (usage).
  const url = `http://127.0.0.1:${await closedPort()}`;
  const taken: string[] = [];
  for (const kind of LEASE_KINDS) {
    const run = holdfast(url, ["force-release", "x", "--reason", "r", "--kind", kind]);
    expect([EXIT.unavailable, EXIT.usage], `${kind}: ${run.stderr}`).toContain(run.status);
    if (run.status === EXIT.unavailable) taken.push(kind);
  }
  expect(taken).toEqual(["mutex", "rwlock", "semaphore", "flow", "election"]);

  const help = holdfast(url, ["--help"]).stdout;
  const usage = /holdfast force-release NAME[^\n]*\n(?:\s{20,}[^\n]*\n)*/.exec(help)?.[0] ?? "";
  expect(/--kind ([\w|]+)/.exec(usage)?.[1]?.split("|").sort()).toEqual([...taken].sort());

  const refused = holdfast(url, ["force-release", "x", "--reason", "r", "--kind", "idempotency"]);
  expect(refused.status).toBe(EXIT.usage);
  for (const kind of taken) expect(refused.stderr).toMatch(new RegExp(`\\b${kind}\\b`));
});
