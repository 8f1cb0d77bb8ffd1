import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY } from "../../tools/dev/local.mjs";
import type { WorkerServer } from "../../tools/serve-worker/serve.mjs";
import { installBuiltPackage } from "../support/builtPackage";
import { EXPECTED } from "../support/idempotentCases.mjs";
import { startLocalService } from "../support/workerServers";

/**
 * `idempotent(handler)` on every runtime it claims (docs/idempotency.md's table): the same cases, one
 * ES module, run by Node 20 (the machine's), Node 24 (the repository's), Deno and Bun (devDependencies
 * `deno` and `bun`), each importing the package as a user has it (node_modules/holdfast: package.json
 * and dist/ from tsconfig.build.json), once per backend: @upstash/redis against the test stack's
 * gateway, and a HoldfastClient (holdfast/client) of the Worker served as `npm start` serves it, over
 * the same Redis. workerd runs its own copy (idempotent.workers.test.ts).
 */
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

/** The entry each runtime runs: the package as a user has it, the backend the environment names, the shared cases. */
const MAIN = `
import process from "node:process";
import { Redis } from "@upstash/redis";
import { idempotent, senders } from "holdfast";
import { HoldfastClient } from "holdfast/client";
import { runCases } from "./cases.mjs";

// A holdfast service when HOLDFAST_URL is set, else Redis.
const keys = process.env.HOLDFAST_URL
  ? { client: new HoldfastClient({ baseUrl: process.env.HOLDFAST_URL, apiKey: process.env.HOLDFAST_API_KEY }) }
  : { redis: new Redis({ url: process.env.UPSTASH_REDIS_REST_URL, token: process.env.UPSTASH_REDIS_REST_TOKEN }) };
console.log(JSON.stringify(await runCases({ idempotent, senders, keys })));
`;

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
      return [bin, ["main.mjs"]];
    },
  },
  { name: "Node 24", command: () => [path.join(ROOT, "node_modules/node/bin/node"), ["main.mjs"]] },
  { name: "Deno", command: () => [path.join(ROOT, "node_modules/.bin/deno"), ["run", "--allow-all", "--quiet", "main.mjs"]] },
  { name: "Bun", command: () => [path.join(ROOT, "node_modules/.bin/bun"), ["run", "main.mjs"]] },
];

/** The keys' backend of a run, by the environment the cases read. */
const BACKENDS: Array<{ name: string; env: () => Record<string, string> }> = [
  { name: "redis", env: () => ({}) },
  { name: "a holdfast service", env: () => ({ HOLDFAST_URL: service.url, HOLDFAST_API_KEY: LOCAL_API_KEY }) },
];

let scratch: string;
let service: WorkerServer;

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-runtimes-"));
  [service] = await Promise.all([startLocalService(), installBuiltPackage(scratch)]);
  fs.copyFileSync(path.join(ROOT, "test/support/idempotentCases.mjs"), path.join(scratch, "cases.mjs"));
  fs.writeFileSync(path.join(scratch, "main.mjs"), MAIN);
}, 120_000);

afterAll(async () => {
  await service?.stop();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

describe.each(BACKENDS)("idempotent(handler) over $name: the same cases on every runtime", (backend) => {
  for (const runtime of RUNTIMES) {
    it(`${runtime.name}: a replay, 409 and 422, a required key, a GitHub redelivery, a failed run retried, a deadline's ttl`, async () => {
      const [bin, args] = runtime.command();
      const upstash = { UPSTASH_REDIS_REST_URL: inject("upstashUrl"), UPSTASH_REDIS_REST_TOKEN: inject("upstashToken") };
      const env = { ...process.env, ...upstash, ...backend.env(), NO_COLOR: "1" };
      const { stdout } = await run(bin, args, { cwd: scratch, env, timeout: 60_000 });
      expect(JSON.parse(stdout.trim().split("\n").at(-1) as string)).toEqual(EXPECTED);
    });
  }
});
