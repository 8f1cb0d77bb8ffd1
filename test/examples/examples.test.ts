// The apps in examples/, run as a user who copied one out would run them: in
// a scratch project whose node_modules/holdfast is the package as built for
// users (tsconfig.build.json and tsconfig.cli.json, its `holdfast` bin), beside
// its dependencies, against the Worker served as `npm start` serves it and the
// test stack's Redis (`npm run start:redis`'s). Each test asserts what the
// app's README says a user sees.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Redis } from "@upstash/redis";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { EXIT } from "../../src/cli/exitCodes.js";
import { LOCAL_API_KEY } from "../../tools/dev/local.mjs";
import { startWorkerServer, type WorkerServer } from "../../tools/serve-worker/serve.mjs";

const run = promisify(execFile);
const ROOT = path.resolve(".");
const TSC = path.join(ROOT, "node_modules/typescript/bin/tsc");
const SIGNING_SECRET = "whsec_examples_test";

let scratch: string;
let service: WorkerServer;
let receiver: WorkerServer;
let env: NodeJS.ProcessEnv;

/** The package as a user's node_modules has it, its dependencies beside it, and each example copied in. */
async function scratchProject(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-examples-"));
  const pkg = path.join(dir, "node_modules/holdfast");
  fs.mkdirSync(pkg, { recursive: true });
  fs.copyFileSync(path.join(ROOT, "package.json"), path.join(pkg, "package.json"));
  await Promise.all(
    ["tsconfig.build.json", "tsconfig.cli.json"].map((config) =>
      run(process.execPath, [TSC, "-p", config, "--outDir", path.join(pkg, "dist")], { cwd: ROOT }),
    ),
  );
  fs.mkdirSync(path.join(dir, "node_modules/.bin"));
  fs.chmodSync(path.join(pkg, "dist/cli/main.js"), 0o755);
  fs.symlinkSync(path.join(pkg, "dist/cli/main.js"), path.join(dir, "node_modules/.bin/holdfast"));
  for (const dep of ["@upstash/redis", "hono", "zod", "@electric-sql/pglite"]) {
    fs.mkdirSync(path.dirname(path.join(dir, "node_modules", dep)), { recursive: true });
    fs.symlinkSync(path.join(ROOT, "node_modules", dep), path.join(dir, "node_modules", dep));
  }
  fs.mkdirSync(path.join(dir, "node_modules/@types"));
  fs.symlinkSync(path.join(ROOT, "node_modules/@types/node"), path.join(dir, "node_modules/@types/node"));
  // As git has them: not what an `npm install` or `wrangler dev` in an example left there.
  const untracked = new Set(["node_modules", ".wrangler", ".dev.vars"]);
  fs.cpSync(path.join(ROOT, "examples"), dir, { recursive: true, filter: (src) => !untracked.has(path.basename(src)) });
  // The Node scripts are TypeScript, as `npx tsx` runs them; here their types are stripped once
  // (a Worker's, beside its wrangler.toml, are wrangler's to bundle).
  for (const app of fs.readdirSync(dir).filter((f) => fs.existsSync(path.join(dir, f, "README.md")))) {
    if (fs.existsSync(path.join(dir, app, "wrangler.toml"))) continue;
    for (const file of fs.readdirSync(path.join(dir, app)).filter((f) => f.endsWith(".ts"))) {
      const source = fs.readFileSync(path.join(dir, app, file), "utf8");
      const js = ts.transpileModule(source, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText;
      fs.writeFileSync(path.join(dir, app, file.replace(/\.ts$/, ".mjs")), js);
    }
  }
  return dir;
}

beforeAll(async () => {
  scratch = await scratchProject();
  const upstash = { UPSTASH_REDIS_REST_URL: inject("upstashUrl"), UPSTASH_REDIS_REST_TOKEN: inject("upstashToken") };
  [service, receiver] = await Promise.all([
    // As `npm start` serves it: the Durable store and its local key.
    startWorkerServer({ vars: { API_KEYS: `default:admin:local-dev=${LOCAL_API_KEY}`, WEBHOOK_SECRET: "examples-test-webhook-secret" } }),
    // As `wrangler deploy` would bundle the example, with its secrets.
    startWorkerServer({ projectDir: path.join(scratch, "webhook-receiver"), vars: { ...upstash, WEBHOOK_SIGNING_SECRET: SIGNING_SECRET } }),
  ]);
  env = {
    ...process.env,
    ...upstash,
    HOLDFAST_URL: service.url,
    HOLDFAST_API_KEY: LOCAL_API_KEY,
    PATH: `${path.join(scratch, "node_modules/.bin")}${path.delimiter}${process.env.PATH}`,
  };
}, 120_000);

afterAll(async () => {
  await Promise.all([service?.stop(), receiver?.stop()]);
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

it.each(["webhook-receiver", "fenced-leader", "region-consumer"])(
  "%s type-checks with its tsconfig.json against the package's declarations",
  async (app) => {
    const checked = await run(process.execPath, [TSC, "-p", app], { cwd: scratch }).then(
      () => "",
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(checked).toBe("");
  },
);

describe("examples/webhook-receiver", () => {
  const redis = () => new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") });

  /** A Stripe-style signature header for `body`, as the sender makes it. */
  async function sign(body: string, secret = SIGNING_SECRET, t = Math.floor(Date.now() / 1000)) {
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${t}.${body}`)));
    return `t=${t},v1=${Buffer.from(mac).toString("hex")}`;
  }

  async function deliver(body: string, signature: string | undefined) {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (signature !== undefined) headers["webhook-signature"] = signature;
    const res = await fetch(`${receiver.url}/webhooks/payments`, { method: "POST", headers, body });
    return { status: res.status, replayed: res.headers.get("idempotent-replayed"), body: (await res.json()) as Record<string, unknown> };
  }

  const eventBody = (id: string) => JSON.stringify({ id, type: "payment_intent.succeeded", data: { object: { id: "pi_1", amount: 2000 } } });
  const processedCount = async (id: string) => Number((await redis().hget("webhook-receiver:processed", id)) ?? 0);

  it("processes a signed event once and replays the stored response on redelivery", async () => {
    const id = `evt_${crypto.randomUUID()}`;
    const body = eventBody(id);
    const first = await deliver(body, await sign(body));
    // The redelivery is signed afresh, as a sender's retry is.
    const again = await deliver(body, await sign(body));
    expect(first).toEqual({ status: 200, replayed: null, body: { received: true, event: id, processed: 1 } });
    expect(again).toEqual({ status: 200, replayed: "true", body: first.body });
    expect(await processedCount(id)).toBe(1);
  });

  it("send-event.mjs (the README's try-it command) prints a first answer and its replay", async () => {
    const { stdout } = await run(process.execPath, ["send-event.mjs", receiver.url], {
      cwd: path.join(scratch, "webhook-receiver"),
      env: { ...env, WEBHOOK_SIGNING_SECRET: SIGNING_SECRET },
    });
    const [first, again] = stdout.trim().split("\n");
    expect(first).toMatch(/^200 replayed=no \{"received":true,"event":"evt_\d+","processed":1\}$/);
    expect(again).toBe(first?.replace("replayed=no", "replayed=true"));
  });

  it("refuses a forged, stale or missing signature with 400 and processes nothing", async () => {
    const id = `evt_${crypto.randomUUID()}`;
    const body = eventBody(id);
    const forged = await deliver(body, await sign(body, "not-the-secret"));
    const stale = await deliver(body, await sign(body, SIGNING_SECRET, Math.floor(Date.now() / 1000) - 3600));
    const tampered = await deliver(eventBody(`${id}x`), await sign(body));
    const missing = await deliver(body, undefined);
    for (const answer of [forged, stale, tampered, missing]) expect(answer).toMatchObject({ status: 400, body: { error: "invalid_signature" } });
    expect(await processedCount(id)).toBe(0);
    expect(await processedCount(`${id}x`)).toBe(0);
    // The refused deliveries took no idempotency key: the genuine one is processed.
    expect(await deliver(body, await sign(body))).toMatchObject({ status: 200, replayed: null, body: { processed: 1 } });
  });
});

describe("examples/nightly-job", () => {
  const HOSTS = 4;

  /** One host's cron run of nightly-report.sh: its exit status and stderr. */
  function host(dir: string, key: string): Promise<{ status: number; stdout: string; stderr: string }> {
    return run(path.join(dir, "nightly-report.sh"), [], { env: { ...env, JOB_KEY: key }, timeout: 15_000 }).then(
      ({ stdout, stderr }) => ({ status: 0, stdout, stderr }),
      (err: { code?: number; stdout?: string; stderr?: string }) => ({
        status: err.code ?? -1,
        stdout: err.stdout ?? "",
        stderr: err.stderr ?? String(err),
      }),
    );
  }

  it("nightly-report.sh runs the example's report.sh with its fence, as the README shows", async () => {
    const ran = await host(path.join(scratch, "nightly-job"), `nightly-readme-${crypto.randomUUID()}`);
    expect(ran).toMatchObject({ status: 0, stderr: "" });
    expect(ran.stdout).toMatch(/^report for \d{4}-\d\d-\d\d built on \S+, fence \d+\n$/);
  });

  it(`of ${HOSTS} hosts at once exactly one runs the job, the others exit ${EXIT.notAcquired}; a late one runs nothing and exits 0`, async () => {
    const dir = path.join(scratch, "nightly-job");
    // The job, in place of the example's report.sh: it notes that it ran, then runs on until the
    // test says (the file "go"), so every other host asks while it is running.
    fs.writeFileSync(
      path.join(dir, "report.sh"),
      '#!/bin/sh\necho "ran, fence $HOLDFAST_FENCE" >> ran.log\nwhile [ ! -f go ]; do sleep 0.05; done\n',
      { mode: 0o755 },
    );
    const key = `nightly-test-${crypto.randomUUID()}`;
    const settled: Array<{ status: number; stderr: string }> = [];
    const hosts = Array.from({ length: HOSTS }, () =>
      host(dir, key).then((r) => {
        settled.push(r);
        return r;
      }),
    );
    try {
      await vi.waitFor(
        () => {
          expect(settled.length).toBe(HOSTS - 1);
          expect(fs.existsSync(path.join(dir, "ran.log"))).toBe(true);
        },
        { timeout: 10_000, interval: 50 },
      );
    } finally {
      fs.writeFileSync(path.join(dir, "go"), ""); // the running job ends, pass or fail
    }
    const statuses = (await Promise.all(hosts)).map((r) => r.status).sort();
    expect(statuses).toEqual([0, ...Array(HOSTS - 1).fill(EXIT.notAcquired)]);
    for (const r of settled.slice(0, HOSTS - 1)) expect(r.stderr).toMatch(/is being run elsewhere right now; not running the command/);
    expect(fs.readFileSync(path.join(dir, "ran.log"), "utf8")).toMatch(/^ran, fence \d+\n$/);

    // After the run: done already, for --retain.
    const late = await host(dir, key);
    expect(late).toMatchObject({ status: 0, stderr: expect.stringMatching(/was done already/) });
    expect(fs.readFileSync(path.join(dir, "ran.log"), "utf8").split("\n").filter(Boolean)).toHaveLength(1);
  });
});

describe("examples/fenced-leader", () => {
  // Most of its time is PGlite starting Postgres (WebAssembly) on a core: 23 s alone at load 8, over 30 s with files side by side.
  it("the paused leader's late write is refused with StaleFenceError and the row holds the new leader's", { timeout: 120_000 }, async () => {
    const { stdout } = await run(process.execPath, ["leader.mjs"], { cwd: path.join(scratch, "fenced-leader"), env, timeout: 90_000 }).catch(
      (err: { code?: number; stdout?: string; stderr?: string }) => {
        throw new Error(`leader.mjs exited ${err.code}:\n${err.stdout}\n${err.stderr}`);
      },
    );
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => l.replace(/^\s*\d+ ms {2}/, ""));
    const fenceOf = (re: RegExp) => Number(lines.map((l) => re.exec(l)?.[1]).find(Boolean));
    const a = fenceOf(/^A: leader, fence (\d+); claimed leader_state$/);
    const b = fenceOf(/^B: leader, fence (\d+), after A's lease ran out; claimed leader_state$/);
    expect(b).toBeGreaterThan(a);
    // After B's grant and before B wrote anything: refused by B's claim alone.
    expect(lines.slice(lines.findIndex((l) => l.startsWith("B: leader")))).toEqual([
      `B: leader, fence ${b}, after A's lease ran out; claimed leader_state`,
      "A: wakes up, still believing it leads, and writes",
      `A: late write refused: StaleFenceError: fence ${a} is stale for resource "leader_state": it has seen fence ${b}`,
      "B: wrote leader_state = B",
      `leader_state: leader B, fence ${b}`,
    ]);
  });
});

describe("examples/region-consumer", () => {
  it("two consumers take turns leading, each works only its own batches, and the observer is told both leaders in order", async () => {
    const dir = path.join(scratch, "region-consumer");
    const regional = { ...env, REGION: `test-${Date.now().toString(36)}` };
    const node = (args: string[]) => run(process.execPath, args, { cwd: dir, env: regional, timeout: 60_000 });
    const [observer, a, b] = await Promise.all([node(["observer.mjs", "2"]), node(["consumer.mjs", "a", "3"]), node(["consumer.mjs", "b", "2"])]);
    const termOf = (out: string, id: string) => Number(new RegExp(`^${id}: leading consumer-\\S+, term (\\d+)$`, "m").exec(out)?.[1]);
    expect(a.stdout.split("\n").filter((l) => l.startsWith("a: batch"))).toHaveLength(3);
    expect(b.stdout.split("\n").filter((l) => l.startsWith("b: batch"))).toHaveLength(2);
    const [first, second] = termOf(a.stdout, "a") < termOf(b.stdout, "b") ? ["a", "b"] : ["b", "a"];
    const terms: Record<string, number> = { a: termOf(a.stdout, "a"), b: termOf(b.stdout, "b") };
    expect(observer.stdout.trim().split("\n")).toEqual([
      `observer: 1: ${first} leads, term ${terms[first]}`,
      `observer: 2: ${second} leads, term ${terms[second]}`,
    ]);
  });
});
