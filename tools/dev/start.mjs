#!/usr/bin/env node
// `npm start`: the Worker as production runs it, on the embedded Durable
// store: the bundle `wrangler deploy` would upload, served by bare workerd
// (tools/serve-worker), with no dev proxy in front, so a client that hangs up
// is seen as it is in production. Durable Object state is kept between runs
// in .wrangler/state/holdfast-<script> (holdfast-start, holdfast-start-redis,
// holdfast-dev, holdfast-dev-redis): each script its own, so two of them run
// side by side (each on its own PORT) without sharing one SQLite file.
// `npm run start:redis`: the same on the Redis store, with a local
// redis-server behind the project's Upstash REST gateway (tools/local-stack).
// `npm run dev` (`--dev`): `wrangler dev` instead, which reloads on every
// edit of src/ (its proxy reads every answer whole, so an HTTP waiter that
// hung up is taken for delivered and keeps a lock it is granted up to its
// ttlMs; wait sockets are not affected; see docs/guarantees.md).
// Honours PORT (default 8787) and every variable the Worker reads (src/env.ts:
// API_KEYS, TOKEN_SECRETS, CORS_ORIGINS, WEBHOOK_SECRET, ONEXPIRE_HOSTS,
// RATE_LIMIT_TIERS, the caps and the rate of new sockets, STORE_TIMEOUT_MS, the Upstash settings), from
// the environment, else from a `.dev.vars` file in the repository's root as
// `wrangler dev` reads it (KEY=value lines); with no API_KEYS it uses a
// documented local-only key in the namespace the library uses by default, so
// `new Mutex(Redis.fromEnv(), name)` and this Worker contend for the same lock
// on one Redis. Every setting is checked first, by the Worker's own rules
// (src/http/settings/settingsProblems.ts): one it would ignore or cannot use
// is said, naming the variable, the entry and what is wrong (never a value),
// before anything starts (exit 78, EX_CONFIG).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";
import { LOCAL_API_KEY, LOCAL_NAMESPACE, busyPortHint, untilAnswers } from "./local.mjs";

const useRedis = process.argv.includes("--redis");
const dev = process.argv.includes("--dev");
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const port = process.env.PORT || "8787";
/** The variables the Worker reads (src/env.ts), passed on from the environment or `.dev.vars`: the settings check's own list. */
const { SETTINGS: WORKER_VARS, settingsProblems } = await tsImport("../../src/http/settings/settingsProblems.ts", import.meta.url);
/** `.dev.vars` (KEY=value lines, # comments, optional quotes), as `wrangler dev` reads it; the environment wins. */
function devVars(file) {
  if (!fs.existsSync(file)) return {};
  const out = {};
  for (const line of fs.readFileSync(file, "utf8").split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith("#")) continue;
    out[m[1]] = m[2].replace(/^(["'])(.*)\1$/, "$2");
  }
  return out;
}
const fromFile = devVars(path.join(ROOT, ".dev.vars"));
const setting = (name) => process.env[name] ?? fromFile[name];
const given = Object.fromEntries(WORKER_VARS.flatMap((name) => (setting(name) === undefined ? [] : [[name, setting(name)]])));
let apiKeys = given.API_KEYS;
// The local-only key is an admin key, so the console can force-release too.
if (!apiKeys) apiKeys = `${LOCAL_NAMESPACE}:admin:local-dev=${LOCAL_API_KEY}`;
const webhookSecret = given.WEBHOOK_SECRET || "holdfast-local-webhook-secret";

// Local development: expiry notifications may go to receivers on this machine over http.
const onExpireHosts = given.ONEXPIRE_HOSTS || "*=localhost|127.0.0.1";
const vars = {
  ONEXPIRE_ALLOW_HTTP_LOCALHOST: "1",
  ...given,
  API_KEYS: apiKeys,
  WEBHOOK_SECRET: webhookSecret,
  ONEXPIRE_HOSTS: onExpireHosts,
};
/** The command that was run, as its messages name it. */
const command = npmCommand();
/** This script's own Durable Object state, kept between its runs and shared with no other script. */
const stateDir = `.wrangler/state/holdfast-${dev ? "dev" : "start"}${useRedis ? "-redis" : ""}`;

// The settings as the Worker will read them, checked by its own rules before anything starts. With --redis
// the Upstash settings are the local stack's, so the user's are not checked.
const checked = useRedis ? Object.fromEntries(Object.entries(vars).filter(([name]) => !name.startsWith("UPSTASH_"))) : vars;
const problems = await settingsProblems(checked);
if (problems.length) {
  for (const problem of problems) console.error(`${command}: ${problem.message}`);
  console.error(`${command}: fix ${[...new Set(problems.map((p) => p.variable))].join(", ")} (the environment, or .dev.vars); nothing was started`);
  process.exit(78);
}
// Said before anything starts: workerd's own "bind(): Address already in use" names no remedy.
const busy = await busyPortHint(Number(port), command);
if (busy) {
  console.error(`${command}: ${busy}`);
  process.exit(1);
}
let stack;
if (useRedis) {
  // Loaded once the settings passed: a malformed one is said without loading what would serve them.
  const { startLocalStack } = await import("../local-stack/stack.mjs");
  stack = await startLocalStack();
  Object.assign(vars, { UPSTASH_REDIS_REST_URL: stack.url, UPSTASH_REDIS_REST_TOKEN: stack.token });
  console.log(`redis-server on 127.0.0.1:${stack.redis.port}, Upstash gateway at ${stack.url}`);
  // For library users: the same Redis through the gateway, as @upstash/redis sees Upstash.
  console.log(`library: export UPSTASH_REDIS_REST_URL=${stack.url} UPSTASH_REDIS_REST_TOKEN=${stack.token}`);
}

let child;
let server;
let stopping = false;
// Registered before the Worker starts, so a Ctrl-C while it starts still stops the local Redis.
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));
if (dev) {
  const args = [
    "wrangler",
    "dev",
    "--port",
    port,
    "--ip",
    "127.0.0.1",
    "--show-interactive-dev-session=false",
    "--persist-to",
    path.join(ROOT, stateDir),
  ];
  for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);
  child = spawn("npx", args, { stdio: "inherit", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
  child.on("exit", (code) => stop(code ?? 0));
  // The URL below is printed once the Worker answers, not when wrangler has merely started.
  await untilAnswers(`http://127.0.0.1:${port}/healthz`, () => stopping);
} else {
  console.log("bundling the Worker as `wrangler deploy` would, and serving it with workerd...");
  try {
    const { startWorkerServer } = await import("../serve-worker/serve.mjs");
    server = await startWorkerServer({ vars, port: Number(port), persistDir: path.join(ROOT, stateDir) });
  } catch (err) {
    console.error(`${command}: ${err.message}`);
    await stack?.stop();
    process.exit(1);
  }
}

const url = `http://127.0.0.1:${port}`;
// What the service says of itself, before the ready line: a malformed API_KEYS (every /v1 call would be
// refused) is said in the service's own words, and the store is the one the settings chose.
const health = await fetch(`${url}/healthz`)
  .then((r) => r.json())
  .catch(() => ({}));
if (health.status === "not_configured") {
  console.error(`${command}: ${health.message}`);
  await stop(78);
}
const storeName = health.store === "redis" ? (useRedis ? "Redis" : "Redis, from your Upstash settings") : "Durable Object";
const key = given.API_KEYS ? "<one of your API_KEYS>" : LOCAL_API_KEY;
console.log(`\nholdfast (${storeName} store${dev ? ", wrangler dev: reloads on edits" : ", served as in production"}) at ${url}`);
console.log(
  `API key: ${key}${given.API_KEYS ? "" : `  (namespace "${LOCAL_NAMESPACE}", the library's default; local only, an admin key: set API_KEYS=namespace=key to use your own)`}`,
);
console.log(`console: ${url}/console (sign in with the key)`);
console.log(`state: ${stateDir} (this command's own; delete it to start afresh)`);
console.log(`try: curl -s -X POST ${url}/v1/locks/demo/acquire -H 'authorization: Bearer ${key}' -d '{"ttlMs":30000}'\n`);

/** `npm start`, `npm run start:redis`, ...: the npm script that ran this, else the one these flags belong to. */
function npmCommand() {
  const byFlags = dev ? (useRedis ? "dev:redis" : "dev") : useRedis ? "start:redis" : "start";
  // npm names the script it runs; run otherwise (by a test, or `node tools/dev/start.mjs`), the flags say which it would be.
  const script = ["start", "start:redis", "dev", "dev:redis"].includes(process.env.npm_lifecycle_event) ? process.env.npm_lifecycle_event : byFlags;
  return script === "start" ? "npm start" : `npm run ${script}`;
}

async function stop(code) {
  if (stopping) return;
  stopping = true;
  child?.kill("SIGTERM");
  await server?.stop();
  await stack?.stop();
  process.exit(code);
}
