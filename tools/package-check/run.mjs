#!/usr/bin/env node
// `npm run check:package`: the package as a user gets it. Packs the tarball
// (prepack builds dist/), checks what it ships, installs it into a scratch
// directory, and runs three consumers against a local stack (redis-server +
// the Upstash gateway) and the service itself (served by workerd), each
// taking and releasing a lock:
//   node-esm     plain Node ESM, `import { Mutex } from "holdfast"`, the
//                client (`holdfast/client`) and the `holdfast` bin
//   ts-nodenext  TypeScript, NodeNext, strict + exactOptionalPropertyTypes +
//                noUncheckedIndexedAccess, skipLibCheck off: compiled by the
//                repo's TypeScript 5.x and by TypeScript 7, then run
//   worker       a Worker bundled by wrangler (no nodejs_compat), served by workerd
// Each also makes a fenced write with holdfast/fence and has an older fence's refused.
// The Node consumers run under every Node a user may have that is here: the
// repo's own (the `node` devDependency, first on an npm script's PATH) and the
// machine's (the first other `node` on PATH, e.g. Debian's Node 20), since the
// package promises `engines.node` >= 20.
// Before installing it reads the tarball: its package.json has no install script
// (preinstall, install, postinstall, prepare) and its Markdown no relative link to a
// file it does not ship (shippedText.mjs); the install itself warns about nothing.
// Exits non-zero with the reason on the first failure.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startLocalStack } from "../local-stack/stack.mjs";
import { startWorkerServer } from "../serve-worker/serve.mjs";
import { danglingLinks, installScripts } from "./shippedText.mjs";

const exec = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CONSUMERS = path.join(ROOT, "tools/package-check/consumers");
const TSC = path.join(ROOT, "node_modules/typescript/bin/tsc");
const TS_VERSION = JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules/typescript/package.json"), "utf8")).version;
const NPM = process.env.npm_execpath; // the npm running this script, when run by npm
/** TypeScript 7 (the native compiler), installed into the scratch project beside the package. */
const TYPESCRIPT_7 = "7.0.2";

/** Paths a published tarball must never contain, and ones it must. */
const FORBIDDEN = [/^test\//, /^bench\//, /^\.ci\//, /^tools\//, /^src\//, /\.test\./];
const REQUIRED = [
  "package.json",
  "README.md",
  "LICENSE",
  "dist/index.js",
  "dist/index.d.ts",
  "dist/hono.js",
  "dist/client/index.js",
  "dist/client/index.d.ts",
  "dist/fence/index.js",
  "dist/fence/index.d.ts",
  "dist/cli/main.js",
  "dist/store/redis/scripts.generated.js",
];

async function run(cmd, args, opts = {}) {
  try {
    return await exec(cmd, args, { maxBuffer: 64 * 1024 * 1024, timeout: 300_000, ...opts });
  } catch (err) {
    const out = `${err.stdout ?? ""}${err.stderr ?? ""}`.trim().split("\n").slice(-40).join("\n");
    throw new Error(`${[cmd, ...args].join(" ")} failed (${err.code ?? err.signal}):\n${out}`);
  }
}

/**
 * Every distinct Node on this machine a consumer could use: this process's, then the
 * first `node` on PATH outside this repository (the machine's own), each with its version.
 */
async function consumerNodes() {
  const nodes = [process.execPath];
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const candidate = path.join(dir, "node");
    if (!dir || path.resolve(dir).startsWith(ROOT) || !fs.existsSync(candidate)) continue;
    if (fs.realpathSync(candidate) !== fs.realpathSync(process.execPath)) nodes.push(candidate);
    break;
  }
  const versioned = [];
  for (const bin of nodes) versioned.push({ bin, version: (await run(bin, ["--version"])).stdout.trim() });
  return versioned;
}

const npm = (args, opts) => (NPM ? run(process.execPath, [NPM, ...args], opts) : run("npm", args, opts));

function step(what) {
  process.stdout.write(`package check: ${what}\n`);
}

/**
 * The README's `install` block (`<!-- sample: install -->`), run as it is written: its `npm pack` is the
 * one above (packed into the scratch directory rather than the clone), its `npm install <clone>/<tarball>
 * @upstash/redis` runs in a new empty project with the clone's path put in, and the library it installed
 * then imports. A block that names another tarball, or other commands, fails here.
 */
async function readmeInstall(scratch, tarball) {
  const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
  const block = /<!-- sample: install -->\n```sh\n([\s\S]*?)\n```/.exec(readme)?.[1];
  if (!block) throw new Error("README.md has no install block (<!-- sample: install --> before a ```sh block)");
  const commands = block
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter(Boolean);
  const expected = ["npm ci", "npm pack", `npm install <clone>/${tarball} @upstash/redis`];
  if (JSON.stringify(commands) !== JSON.stringify(expected)) {
    throw new Error(`README.md's install block runs ${JSON.stringify(commands)}; this check runs ${JSON.stringify(expected)}: make them agree`);
  }
  const project = path.join(scratch, "readme-install");
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "readme-install", private: true, type: "module" }));
  const install = commands[2].replace("<clone>", scratch).split(" ").slice(1);
  await npm([...install, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel", "error"], { cwd: project });
  await run(
    process.execPath,
    ["--input-type=module", "-e", "const m = await import('holdfast'); if (typeof m.Mutex !== 'function') process.exit(1);"],
    {
      cwd: project,
    },
  );
}

async function main() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-package-"));
  let stack;
  let worker;
  let service;
  try {
    step("npm pack (prepack builds dist/)");
    const { stdout } = await npm(["pack", "--json", "--pack-destination", scratch], { cwd: ROOT });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf("[")));
    const files = packed.files.map((f) => f.path);
    const forbidden = files.filter((f) => FORBIDDEN.some((re) => re.test(f)));
    if (forbidden.length) throw new Error(`the tarball ships files it must not: ${forbidden.join(", ")}`);
    const missing = REQUIRED.filter((f) => !files.includes(f));
    if (missing.length) throw new Error(`the tarball lacks ${missing.join(", ")}`);
    step(`${packed.filename}: ${files.length} files, ${(packed.size / 1024).toFixed(0)} KiB packed`);

    step("the shipped package.json has no install script, the shipped Markdown no dangling relative link");
    const unpacked = path.join(scratch, "unpacked");
    fs.mkdirSync(unpacked);
    await run("tar", ["-xzf", path.join(scratch, packed.filename), "-C", unpacked]);
    const shippedPkg = JSON.parse(fs.readFileSync(path.join(unpacked, "package/package.json"), "utf8"));
    const scripts = installScripts(shippedPkg);
    if (scripts.length) throw new Error(`the package would run scripts on a consumer's install: ${scripts.join("; ")}`);
    const dangling = danglingLinks(path.join(unpacked, "package"), files);
    if (dangling.length) {
      throw new Error(
        `dangling relative links in the shipped Markdown (a file it does not ship is linked absolutely, under ${shippedPkg.homepage}; an anchor names a heading): ${dangling.join(", ")}`,
      );
    }

    step("installing the tarball into a scratch project");
    fs.cpSync(CONSUMERS, scratch, { recursive: true });
    const upstash = JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules/@upstash/redis/package.json"), "utf8")).version;
    fs.writeFileSync(
      path.join(scratch, "package.json"),
      JSON.stringify(
        {
          name: "holdfast-consumers",
          private: true,
          type: "module",
          dependencies: { holdfast: `file:./${packed.filename}`, "@upstash/redis": upstash },
          devDependencies: { "typescript-7": `npm:typescript@${TYPESCRIPT_7}` },
        },
        null,
        2,
      ),
    );
    // A consumer's install warns about nothing (an install script, for one, is a warning under npm 11's allowScripts).
    const installed = await npm(["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel", "warn"], { cwd: scratch });
    // npm's own network retries ("npm warn fetch ... retry") say nothing about the package.
    const warnings = `${installed.stdout}${installed.stderr}`
      .split("\n")
      .filter((line) => /\bwarn\b/i.test(line) && !/\bwarn (fetch|retry)\b/i.test(line));
    if (warnings.length) throw new Error(`installing the tarball warned:\n${warnings.join("\n")}`);

    step("the README's install block, as written, in a new project");
    await readmeInstall(scratch, packed.filename);

    stack = await startLocalStack();
    const upstashEnv = { UPSTASH_REDIS_REST_URL: stack.url, UPSTASH_REDIS_REST_TOKEN: stack.token };
    const apiKey = "package-check-key-123";
    service = await startWorkerServer({ vars: { ...upstashEnv, API_KEYS: `consumer=${apiKey}` } });
    const env = { ...process.env, ...upstashEnv, HOLDFAST_URL: service.url, HOLDFAST_API_KEY: apiKey };
    const results = [];

    const tsDir = path.join(scratch, "ts-nodenext");
    step(`ts-nodenext: TypeScript ${TS_VERSION} with NodeNext and the strictest flags`);
    await run(process.execPath, [TSC, "-p", "."], { cwd: tsDir });
    step(`ts-nodenext: TypeScript ${TYPESCRIPT_7}, the same project (type check only)`);
    await run(path.join(scratch, "node_modules/.bin/tsc"), ["-p", ".", "--noEmit"], { cwd: tsDir });

    for (const node of await consumerNodes()) {
      step(`node-esm: plain Node ESM, under Node ${node.version}`);
      results.push({ ...JSON.parse((await run(node.bin, ["main.mjs"], { cwd: path.join(scratch, "node-esm"), env })).stdout), node: node.version });
      step(`ts-nodenext: the compiled consumer, under Node ${node.version}`);
      results.push({ ...JSON.parse((await run(node.bin, ["dist/main.js"], { cwd: tsDir, env })).stdout), node: node.version });
    }

    step("worker: bundled by wrangler, served by workerd");
    worker = await startWorkerServer({
      projectDir: path.join(scratch, "worker"),
      vars: { ...upstashEnv, HOLDFAST_URL: service.url, HOLDFAST_API_KEY: apiKey },
    });
    const res = await fetch(worker.url);
    const body = await res.text();
    if (res.status !== 200) throw new Error(`the Worker consumer answered ${res.status}: ${body.slice(0, 500)}`);
    results.push(JSON.parse(body));

    for (const r of results) {
      if (!(r.fence > 0)) throw new Error(`${r.consumer} got no fence: ${JSON.stringify(r)}`);
      // holdfast/fence: each consumer's older-fence write was refused (StaleFenceError).
      if (r.staleRefused !== true) throw new Error(`${r.consumer}: a stale fenced write was not refused: ${JSON.stringify(r)}`);
      step(`ok  ${JSON.stringify(r)}`);
    }
  } finally {
    await worker?.stop().catch(() => {});
    await service?.stop().catch(() => {});
    await stack?.stop().catch(() => {});
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

main().then(
  () => {
    step("passed");
    process.exit(0);
  },
  (err) => {
    console.error(`package check failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
