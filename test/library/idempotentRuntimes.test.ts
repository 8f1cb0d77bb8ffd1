import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { installBuiltPackage } from "../support/builtPackage";

/**
 * `idempotent(handler)` on every runtime it claims (docs/idempotency.md's table): the same cases, one
 * ES module, run by Node 20 (the machine's), Node 24 (the repository's), Deno and Bun (devDependencies
 * `deno` and `bun`), each importing the package as a user has it (node_modules/holdfast: package.json
 * and dist/ from tsconfig.build.json) over @upstash/redis against the test stack's gateway. workerd runs
 * its own copy (idempotent.workers.test.ts).
 */
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

const CASES = `
import process from "node:process";
import { Redis } from "@upstash/redis";
import { idempotent, senders } from "holdfast";

const redis = new Redis({ url: process.env.UPSTASH_REDIS_REST_URL, token: process.env.UPSTASH_REDIS_REST_TOKEN });
const unique = (label) => label + "-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 8);
const post = (headers, body) =>
  new Request("https://shop.example/hook", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const seen = {};

{
  let runs = 0;
  const h = idempotent(async (request, extra) => { runs++; return Response.json({ runs, extra }, { status: 201 }); }, { redis, ttlMs: 5000 });
  const key = unique("replay");
  const first = await h(post({ "idempotency-key": key }, { a: 1 }), "env");
  const again = await h(post({ "idempotency-key": key }, { a: 1 }), "env");
  seen.replay = { first: first.status, again: again.status, replayed: again.headers.get("idempotent-replayed"), body: await again.json(), runs };
}
{
  let release;
  const gate = new Promise((r) => (release = r));
  let runs = 0;
  const h = idempotent(async () => { runs++; await gate; return new Response("done"); }, { redis, ttlMs: 5000 });
  const key = unique("overlap");
  const first = h(post({ "idempotency-key": key }, { a: 1 }));
  while (runs === 0) await new Promise((r) => setTimeout(r, 10));
  const overlap = await h(post({ "idempotency-key": key }, { a: 1 }));
  const other = await h(post({ "idempotency-key": key }, { a: 2 }));
  release();
  seen.conflicts = { overlap: overlap.status, retryAfter: Number(overlap.headers.get("retry-after")) >= 1, other: other.status, first: (await first).status, runs };
}
{
  const h = idempotent(async () => new Response("ran"), { redis, ttlMs: 5000, required: true });
  const missing = await h(post({}, { a: 1 }));
  seen.required = { status: missing.status, error: (await missing.json()).error };
}
{
  let runs = 0;
  const h = idempotent(async () => { runs++; return new Response("processed"); }, { redis, ttlMs: 5000, key: senders.github, required: true });
  const id = unique("gh");
  await h(post({ "x-github-delivery": id, "x-github-event": "push" }, { ref: "main" }));
  const again = await h(post({ "x-github-delivery": id, "x-github-event": "push" }, { ref: "main" }));
  seen.github = { replayed: again.headers.get("idempotent-replayed"), runs };
}
console.log(JSON.stringify(seen));
`;

const EXPECTED = {
  replay: { first: 201, again: 201, replayed: "true", body: { runs: 1, extra: "env" }, runs: 1 },
  conflicts: { overlap: 409, retryAfter: true, other: 422, first: 200, runs: 1 },
  required: { status: 400, error: "missing_idempotency_key" },
  github: { replayed: "true", runs: 1 },
};

/** The machine's Node 20 (outside the repository), if it has one. */
function machineNode20(): string | undefined {
  for (const dir of [...(process.env.PATH ?? "").split(path.delimiter), "/usr/bin", "/usr/local/bin"]) {
    const bin = path.join(dir, "node");
    if (!dir || path.resolve(dir).startsWith(ROOT) || !fs.existsSync(bin)) continue;
    if (String(execFileSync(bin, ["--version"])).startsWith("v20.")) return bin;
  }
  return undefined;
}

const RUNTIMES: Array<{ name: string; command: () => [string, string[]] }> = [
  {
    name: "Node 20",
    command: () => {
      const bin = machineNode20();
      if (!bin) throw new Error("no Node 20 on this machine outside the repository (docs/idempotency.md names it): put one on PATH");
      return [bin, ["cases.mjs"]];
    },
  },
  { name: "Node 24", command: () => [path.join(ROOT, "node_modules/node/bin/node"), ["cases.mjs"]] },
  { name: "Deno", command: () => [path.join(ROOT, "node_modules/.bin/deno"), ["run", "--allow-all", "--quiet", "cases.mjs"]] },
  { name: "Bun", command: () => [path.join(ROOT, "node_modules/.bin/bun"), ["run", "cases.mjs"]] },
];

let scratch: string;

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-runtimes-"));
  await installBuiltPackage(scratch);
  fs.writeFileSync(path.join(scratch, "cases.mjs"), CASES);
}, 120_000);

afterAll(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

describe("idempotent(handler): the same cases on every runtime", () => {
  for (const runtime of RUNTIMES) {
    it(`${runtime.name}: a replay, 409 and 422, a required key, a GitHub redelivery`, async () => {
      const [bin, args] = runtime.command();
      const env = { ...process.env, UPSTASH_REDIS_REST_URL: inject("upstashUrl"), UPSTASH_REDIS_REST_TOKEN: inject("upstashToken"), NO_COLOR: "1" };
      const { stdout } = await run(bin, args, { cwd: scratch, env, timeout: 60_000 });
      expect(JSON.parse(stdout.trim().split("\n").at(-1) as string)).toEqual(EXPECTED);
    });
  }
});
