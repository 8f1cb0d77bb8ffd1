// The code samples of README.md and docs/*.md, run as a reader would run them:
// every fenced block carries a `<!-- sample: ID -->` marker, and is either run
// here or listed below with the reason it is not (a docs/ fragment that
// continues the page's earlier steps is type-checked as written instead). TypeScript samples have their types
// stripped (TypeScript's transpileModule, target ESNext: no syntax lowered, as
// Node's own type stripping or a plain-JS reader leaves it) and run as ES
// modules under Node 20 (the machine's) and Node 24 (the repository's; docs/
// samples under Node 24 only), with
// the package as built for users, against the Worker served as `npm start`
// serves it (its local key and namespace) and the test stack's Redis. What each
// sample leaves to the reader (buildReport, queue...) and what it is seen to do
// come from support/readmeSamples/fixtures.mjs; a sample that needs newer
// syntax is marked `node 24+`, says so, follows one that does not, and is shown
// to fail on Node 20. The TypeScript samples are also type-checked as written
// (strict, NodeNext) against the package's declarations, with what they leave
// to the reader declared in support/readmeSamples/globals.ts.
import { installBuiltPackage } from "../support/builtPackage";
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY, LOCAL_NAMESPACE } from "../../tools/dev/local.mjs";
import { startWorkerServer, type WorkerServer } from "../../tools/serve-worker/serve.mjs";

const run = promisify(execFile);
const ROOT = path.resolve(".");
/** The files whose samples are checked here: the README and every page of docs/. */
const FILES = [
  "README.md",
  ...fs
    .readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const SUPPORT = path.join(ROOT, "test/support/readmeSamples");

/**
 * How each marked block is checked: run under Node, run with curl, type-checked as written (a docs/ fragment
 * that continues its page's earlier steps, its free names declared in globals.ts), or the reason it is not.
 */
const PLAN: Record<string, "node" | "curl" | "typecheck" | { notRun: string }> = {
  start: { notRun: "npm ci and npm start: .ci/run does the one, test/tools/localStart.test.ts runs the other" },
  curl: "curl",
  test: { notRun: "npm ci and npm test: what .ci/run runs" },
  install: { notRun: "npm run check:package (in .ci/run) runs this block as written: the tarball it packs, installed in a new project" },
  client: "node",
  "client-await-using": "node",
  "client-lease-travels": "node",
  "verify-notification": "node",
  cli: { notRun: "needs a deployment and the reader's scripts; test/cli/cli.test.ts runs every command" },
  "library-mutex": "node",
  "library-rwlock-semaphore": "node",
  "hono-webhook": "node",
  "library-run-once": "node",
  "fence-redis": "node",
  deploy: { notRun: "wrangler secret put and deploy need a Cloudflare account" },
  elect: { notRun: "runs until stopped: test/cli/elect.test.ts drives holdfast elect with two processes" },
  // docs/API.md, DESIGN.md, guarantees.md, metrics.md
  "api-election-watch": {
    notRun: "a socket's transcript: test/kinds/election/electionObserve.conformance.ts runs watch?since on both stores",
  },
  "api-acquire-body": { notRun: "a request body's shape: test/contract runs every route's bodies" },
  "design-kind-descriptor": { notRun: "an abridged excerpt of src/kinds/mutex/index.ts, which npm run typecheck compiles whole" },
  "design-operation-entry": {
    notRun: "one entry of a kind's list of operations, as src/kinds/<kind>/operations.ts holds them (npm run typecheck compiles those whole)",
  },
  chaos: { notRun: "the fault suite: minutes of real redis-servers killed and partitioned (npm run chaos)" },
  "metrics-binding": { notRun: "an Analytics Engine binding in wrangler.toml: needs a Cloudflare account" },
  "metrics-sql-wait-times": { notRun: "Analytics Engine's SQL API: needs a Cloudflare account" },
  "metrics-sql-grant-rate": { notRun: "Analytics Engine's SQL API: needs a Cloudflare account" },
  "metrics-sql-lapses": { notRun: "Analytics Engine's SQL API: needs a Cloudflare account" },
  // docs/deploy.md
  "deploy-vars": { notRun: "wrangler.toml's [vars]: the values are the reader's" },
  "deploy-deploy": { notRun: "npm run deploy needs a Cloudflare account" },
  "deploy-url": { notRun: "the URL wrangler prints" },
  "deploy-secrets": { notRun: "wrangler secret put needs a Cloudflare account" },
  "deploy-check": "curl",
  // docs/flow-limits.md
  "flow-client": "typecheck",
  "flow-cli": { notRun: "needs a deployment and the reader's script: test/cli/cli.test.ts runs run --limit" },
  "flow-library": "typecheck",
  // docs/fencing.md
  "fence-import": "node",
  "fence-gap": { notRun: "a timeline, not code" },
  "fence-claim-on-grant": "typecheck",
  "fence-redis-calls": "typecheck",
  "fence-durable-object": { notRun: "a Durable Object class: test/fence/durableObject.workers.test.ts runs DurableObjectFence in one" },
  "fence-postgres": { notRun: "needs pg and a Postgres server: test/fence/postgres.test.ts runs PostgresFence on PGlite" },
  "fence-d1": { notRun: "needs a D1 binding: test/fence/d1.workers.test.ts runs SqliteFence over d1Batch" },
  "fence-sqlite-batch": { notRun: "a batch function over the reader's SQLite driver: test/fence/d1.workers.test.ts runs SqliteFence" },
  "fence-psql-run": { notRun: "needs psql, a Postgres server and a deployment" },
  "fence-psql-sql": { notRun: "the SQL file the psql sample runs" },
  // docs/idempotency.md
  "idempotency-worker": "node",
  "idempotency-client": "node",
  "idempotency-lambda": "node",
  "idempotency-node-http": "node",
  "idempotency-deno": {
    notRun:
      "npm install of the tarball: test/library/idempotentRuntimes.test.ts runs the package so under Deno (node_modules beside a package.json, deno run --allow-all)",
  },
  "idempotency-hono": "node",
  "idempotency-run-once": "node",
};

interface Sample {
  id: string;
  /** README.md or docs/<page>.md. */
  file: string;
  lang: string;
  code: string;
  /** The `## ` section it is in. */
  section: string;
  /** Marked `node 24+`: newer syntax than Node 20 parses. */
  node24: boolean;
}

/** Every fenced block of a file, with its marker; an unmarked block is returned with id "". */
function samples(file: string): Sample[] {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  const found: Sample[] = [];
  const lines = text.split("\n");
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith("## ")) section = line.slice(3);
    const fence = /^```(\w*)/.exec(line);
    if (!fence) continue;
    const end = lines.indexOf("```", i + 1);
    const marker = /^<!-- sample: ([\w-]+)(, node 24\+)? -->$/.exec(lines[i - 1] ?? "");
    found.push({
      id: marker?.[1] ?? "",
      file,
      lang: fence[1] ?? "",
      code: lines.slice(i + 1, end).join("\n"),
      section,
      node24: Boolean(marker?.[2]),
    });
    i = end;
  }
  return found;
}

const all = FILES.flatMap(samples);
const byId = new Map(all.map((s) => [s.id, s]));

/** The first `node` outside this repository that is Node `major` (the machine's), or why there is none. */
function machineNode(major: number): string | Error {
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/bin", "/usr/local/bin"];
  const seen: string[] = [];
  for (const dir of dirs) {
    const bin = path.join(dir, "node");
    if (!dir || path.resolve(dir).startsWith(ROOT) || !fs.existsSync(bin) || seen.includes(fs.realpathSync(bin))) continue;
    seen.push(fs.realpathSync(bin));
    if (versionOf(bin).startsWith(`v${major}.`)) return bin;
  }
  return new Error(
    `README.md names Node ${major} for the library and client, but no Node ${major} is on this machine outside the repository ` +
      `(found: ${seen.map((b) => `${b} ${versionOf(b)}`).join(", ") || "none"}). Put one on PATH (e.g. from nodejs.org); ` +
      "this test does not skip without it.",
  );
}

function versionOf(bin: string): string {
  try {
    return String(execFileSync(bin, ["--version"])).trim();
  } catch {
    return "";
  }
}

/** The repository's Node 24 (the `node` devDependency). */
function repoNode(): string | Error {
  const bin = path.join(ROOT, "node_modules/node/bin/node");
  const version = fs.existsSync(bin) ? versionOf(bin) : "";
  return version.startsWith("v24.") ? bin : new Error(`the repository's Node 24 is not at ${bin} (found ${version || "nothing"}): run npm ci`);
}

const NODES: Array<{ major: 20 | 24; bin: string | Error }> = [
  { major: 20, bin: machineNode(20) },
  { major: 24, bin: repoNode() },
];

/**
 * The strict consumer's settings of check:package (tools/package-check/consumers/ts-nodenext), with Node's types.
 * skipLibCheck: the samples are checked against the declarations, but the declaration files themselves (the
 * package's, Node's, zod's, hono's, the DOM's) are not checked again here: that took 18 s of a 20 s budget on a
 * quiet machine (0.3 s for the samples), and check:package checks the package's own with skipLibCheck off.
 */
const TYPED_SAMPLES = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2022", "DOM", "ESNext.Disposable"],
    types: ["node"],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    noEmit: true,
  },
  include: ["typed"],
};

let scratch: string;
let worker: WorkerServer;
let env: NodeJS.ProcessEnv;

/**
 * A scratch project as a user has it: node_modules/holdfast is the package built for users (its
 * package.json, dist/ from tsconfig.build.json), beside its dependencies; the samples and the
 * fixtures next to it.
 */
async function scratchProject(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-readme-"));
  await installBuiltPackage(dir);
  for (const file of fs.readdirSync(SUPPORT)) fs.copyFileSync(path.join(SUPPORT, file), path.join(dir, file));
  // The samples as TypeScript too, to be checked against the package's declarations.
  fs.mkdirSync(path.join(dir, "typed"));
  fs.renameSync(path.join(dir, "globals.ts"), path.join(dir, "typed/globals.ts"));
  fs.mkdirSync(path.join(dir, "node_modules/@types"));
  fs.symlinkSync(path.join(ROOT, "node_modules/@types/node"), path.join(dir, "node_modules/@types/node"));
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(TYPED_SAMPLES));
  for (const s of all.filter((s) => PLAN[s.id] === "node" || PLAN[s.id] === "typecheck")) {
    fs.writeFileSync(path.join(dir, `typed/${s.id}.ts`), s.code);
    if (PLAN[s.id] !== "node") continue;
    const js = ts.transpileModule(s.code, { compilerOptions: { target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.ESNext } }).outputText;
    fs.writeFileSync(path.join(dir, `${s.id}.mjs`), js);
  }
  return dir;
}

beforeAll(async () => {
  [scratch, worker] = await Promise.all([
    scratchProject(),
    // As `npm start` serves it: the Durable store, its local key and namespace, notifications to this machine.
    startWorkerServer({
      vars: {
        API_KEYS: `${LOCAL_NAMESPACE}:admin:local-dev=${LOCAL_API_KEY}`,
        WEBHOOK_SECRET: "readme-samples-webhook-secret",
        ONEXPIRE_HOSTS: "*=localhost|127.0.0.1",
        ONEXPIRE_ALLOW_HTTP_LOCALHOST: "1",
      },
    }),
  ]);
  env = {
    ...process.env,
    HOLDFAST_URL: worker.url,
    HOLDFAST_API_KEY: LOCAL_API_KEY,
    UPSTASH_REDIS_REST_URL: inject("upstashUrl"),
    UPSTASH_REDIS_REST_TOKEN: inject("upstashToken"),
  };
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

/** Runs one sample under `bin`: its exit status, what its fixture saw, and its stderr. */
async function runSample(bin: string, id: string) {
  try {
    const { stdout, stderr } = await run(bin, ["driver.mjs", id, `${id}.mjs`], { cwd: scratch, env, timeout: 15_000 });
    return { status: 0, seen: JSON.parse(stdout.trim().split("\n").at(-1) as string), stderr };
  } catch (err) {
    const e = err as { code?: number; signal?: string; stderr?: string };
    return { status: e.code ?? e.signal, seen: undefined, stderr: e.stderr ?? String(err) };
  }
}

describe("the samples of README.md and docs/", () => {
  it("every fenced block is marked, and every marked block is run here or says why not", () => {
    const how = "put <!-- sample: ID --> on the line above each fenced block of README.md and docs/*.md, and give ID a PLAN entry here";
    expect(
      all.filter((s) => !s.id).map((s) => `${s.file}, ${s.section}: ${s.code.split("\n")[0]}`),
      how,
    ).toEqual([]);
    expect(
      all.map((s) => s.id).filter((id, i, ids) => ids.indexOf(id) !== i),
      "sample ids are unique across the files",
    ).toEqual([]);
    expect(
      all.map((s) => s.id).filter((id) => !(id in PLAN)),
      how,
    ).toEqual([]);
    expect(Object.keys(PLAN).filter((id) => !byId.has(id))).toEqual([]);
    // The README's TypeScript is run whole; a docs/ page's is run or type-checked, or names the test that runs its like.
    expect(
      all
        .filter((s) => ["ts", "js"].includes(s.lang) && PLAN[s.id] !== "node" && (s.file === "README.md" || PLAN[s.id] !== "typecheck"))
        .map((s) => s.id),
    ).toEqual(["design-kind-descriptor", "design-operation-entry", "fence-durable-object", "fence-postgres", "fence-d1", "fence-sqlite-batch"]);
  });

  it("a sample with newer syntax than Node 20's says so and follows one in its section that does not use it", () => {
    for (const s of all.filter((s) => /\bawait using\b/.test(s.code))) {
      expect(s.node24, `${s.id} is marked node 24+`).toBe(true);
      expect(s.code, `${s.id} says it needs Node 24`).toMatch(/Node 24\+/);
      const before = all.slice(0, all.indexOf(s)).filter((o) => o.section === s.section && PLAN[o.id] === "node" && !o.node24);
      expect(
        before.map((o) => o.id),
        `a sample before ${s.id} in "${s.section}" without it`,
      ).not.toEqual([]);
    }
  });

  // Its own budget: one tsc process, which a busy machine (npm run ci:busy) slows two to three times.
  it("the TypeScript samples type-check as written against the package's declarations (strict, NodeNext)", { timeout: 60_000 }, async () => {
    const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
    const checked = await run(process.execPath, [tsc, "-p", "."], { cwd: scratch }).then(
      () => "",
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(checked).toBe("");
  });

  for (const id of Object.keys(PLAN).filter((id) => PLAN[id] === "curl"))
    it(`the ${id} sample answers as shown`, async () => {
      const block = byId.get(id)?.code ?? "";
      const steps = block.replace(/\\\n\s*/g, "").split("\n");
      const host = new URL(worker.url).host;
      let token = "";
      for (let i = 0; i < steps.length; i++) {
        const command = steps[i] as string;
        if (!command.startsWith("curl ")) continue;
        const shown = (steps[i + 1] ?? "").replace(/^# (\d{3} )?/, "");
        // As the page has it: its host, or $HOLDFAST_URL and $HOLDFAST_API_KEY (docs/deploy.md) set to the local Worker's.
        const { stdout } = await run("bash", ["-c", command.replaceAll("localhost:8787", host).replaceAll("hf_…", token)], {
          timeout: 15_000,
          env: { ...process.env, HOLDFAST_URL: worker.url, HOLDFAST_API_KEY: LOCAL_API_KEY },
        });
        const answer = JSON.parse(stdout) as Record<string, unknown>;
        token ||= typeof answer.token === "string" ? answer.token : "";
        // Every field shown is in the answer; a literal value shown (no "…") is the answer's.
        for (const [, field] of shown.matchAll(/"(\w+)":/g)) expect(answer, command).toHaveProperty(field as string);
        for (const [, field, value] of shown.matchAll(/"(\w+)":("[^"…]*"|true|false)(?=[,}])/g)) {
          expect(answer[field as string], `${command}: ${field}`).toEqual(JSON.parse(value as string));
        }
      }
      expect(token).toMatch(/^hf_/);
    });

  /** What each run sample must be seen to do, from its fixture's report. */
  const EXPECT: Record<string, (seen: Record<string, unknown>) => void> = {
    client: (seen) =>
      expect(seen).toMatchObject({
        report: { fence: expect.any(Number), heldFence: (seen.report as { fence: number }).fence, signal: true },
        pdfRuns: 1,
        heldAfter: false,
        exportState: "completed",
      }),
    "client-await-using": (seen) =>
      expect(seen).toMatchObject({ report: { heldFence: (seen.report as { fence: number }).fence, signal: true }, heldAfter: false }),
    "client-lease-travels": (seen) => {
      expect(seen.sent).toEqual([expect.objectContaining({ kind: "mutex", name: "invoice-42", token: expect.stringMatching(/^hf_/) })]);
      expect(seen).toMatchObject({ invoice: { heldFence: (seen.invoice as { fence: number }).fence }, heldAfter: false });
    },
    "verify-notification": (seen) => {
      const { name, fence } = seen.lapsed as { name: string; fence: number };
      expect(seen.stale).toEqual([[LOCAL_NAMESPACE, name, fence, null]]);
      expect(seen.forgedStatus).toBe(401);
    },
    "library-mutex": (seen) =>
      expect(seen).toMatchObject({ write: { fence: expect.any(Number), heldFence: (seen.write as { fence: number }).fence }, heldAfter: false }),
    "library-rwlock-semaphore": (seen) =>
      expect(seen).toMatchObject({
        calls: [
          ["read", "read"],
          ["write", "write", "number"],
          ["render", 1],
        ],
        catalogAfter: "free",
        permitsUsedAfter: 0,
      }),
    "hono-webhook": (seen) =>
      expect(seen).toMatchObject({
        credited: [seen.eventId],
        deliveries: [
          { status: 200, replayed: null, body: { received: true } },
          { status: 200, replayed: "true", body: { received: true } },
        ],
      }),
    "fence-redis": (seen) => expect(seen).toMatchObject({ value: "shipped", fence: expect.any(Number), stale: "stale_fence" }),
    "library-run-once": (seen) => {
      runOnceRuns += seen.runs as number;
      expect(seen.state).toBe("completed");
      // The stack's Redis is fresh per test run: whichever run comes first runs the job, every later one gets its result.
      expect(runOnceRuns, "buildReport ran exactly once across every run").toBe(1);
    },
  };
  let runOnceRuns = 0;
  let summaryRuns = 0;
  const deliveredOnce = (seen: Record<string, unknown>) =>
    expect(seen.answers).toEqual([
      { status: 200, replayed: null, body: { ok: true } },
      { status: 200, replayed: "true", body: { ok: true } },
      { status: 400, replayed: null, body: expect.objectContaining({ error: "missing_idempotency_key" }) },
    ]);
  Object.assign(EXPECT, {
    "fence-import": () => {},
    "idempotency-worker": (seen) => {
      deliveredOnce(seen);
      expect(seen.fulfilled).toBe(1);
    },
    "idempotency-node-http": (seen) => {
      deliveredOnce(seen);
      expect(seen.fulfilled).toBe(1);
    },
    "idempotency-client": (seen) => {
      expect(seen.answers).toEqual([
        { status: 200, replayed: null },
        { status: 200, replayed: "true" },
      ]);
      expect(seen).toMatchObject({ fulfilled: 1, state: "completed" });
    },
    "idempotency-lambda": (seen) => {
      expect(seen.answers).toEqual([
        { status: 200, replayed: null, body: { received: true } },
        { status: 200, replayed: "true", body: { received: true } },
      ]);
      expect(seen.processed).toBe(1);
    },
    "idempotency-hono": (seen) => {
      expect(seen.answers).toEqual([
        { status: 200, replayed: null, body: { received: seen.id } },
        { status: 200, replayed: "true", body: { received: seen.id } },
      ]);
      expect(seen.credited).toEqual(["in_1"]);
    },
    "idempotency-run-once": (seen) => {
      summaryRuns += seen.runs as number;
      expect(seen.state).toBe("completed");
      expect(summaryRuns, "buildReport ran exactly once").toBe(1);
    },
  } satisfies Record<string, (seen: Record<string, unknown>) => void>);

  for (const s of all.filter((s) => PLAN[s.id] === "node")) {
    for (const node of NODES.filter((n) => s.file === "README.md" || n.major === 24)) {
      if (s.node24 && node.major < 24) {
        it(`${s.id} (node 24+) is a SyntaxError on Node ${node.major}, as it says`, async () => {
          if (node.bin instanceof Error) throw node.bin;
          const r = await runSample(node.bin, s.id);
          expect(r.status).not.toBe(0);
          expect(r.stderr).toMatch(/SyntaxError/);
        });
        continue;
      }
      it(`${s.id} runs on Node ${node.major} and does what it says`, async () => {
        if (node.bin instanceof Error) throw node.bin;
        const r = await runSample(node.bin, s.id);
        expect(r.status, r.stderr).toBe(0);
        expect(r.seen.node).toMatch(new RegExp(`^v${node.major}\\.`));
        (EXPECT[s.id] ?? (() => expect.fail(`no expectation for ${s.id}`)))(r.seen);
      });
    }
  }
});
