// Serves the Worker the way production runs it: the bundle `wrangler deploy`
// would upload, in workerd through Miniflare's Node API, without `wrangler
// dev`'s proxy worker, inspector and file watcher. For benchmarks, and for
// Node tests that need a real TCP client in front of the Worker.
//
// The Worker is bundled once per process (the first call), so edits to src/
// during a run do not reload it; the wrangler.toml it was bundled with is
// snapshotted next to the bundle, so compatibility date, flags and Durable
// Object bindings/migrations always match the classes the bundle exports.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import readline from "node:readline";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const WRANGLER_JS = path.join(ROOT, "node_modules/wrangler/bin/wrangler.js");

/**
 * @typedef {object} WorkerServer
 * @property {string} url  http://127.0.0.1:<port>, no trailing slash
 * @property {() => Promise<void>} stop  disposes workerd (and its in-memory state)
 */

/**
 * @typedef {object} Bundle
 * @property {string} dir  temp dir holding worker.js and the wrangler.toml snapshot
 * @property {string} name  the Worker's name from wrangler.toml
 * @property {string} scriptPath  the bundled entry module
 * @property {Record<string, unknown>} workerOptions  Miniflare worker options from the config, without script;
 *   its bindings are wrangler.toml's [vars]
 */

/** @type {Promise<Bundle> | undefined} */
let bundling;

/**
 * Starts the Worker on 127.0.0.1 on a free port.
 * @param {{ vars: Record<string, string>, persistDir?: string }} options
 *   vars: the Worker's vars and secrets (API_KEYS, WEBHOOK_SECRET, UPSTASH_REDIS_REST_URL/TOKEN...),
 *   over wrangler.toml's [vars]; persistDir: keep Durable Object storage there (default: in memory).
 * @returns {Promise<WorkerServer>}
 */
export async function startWorkerServer({ vars, persistDir }) {
  bundling ??= buildBundle().catch((err) => {
    bundling = undefined; // let a later call try again (e.g. after a syntax error is fixed)
    throw err;
  });
  const bundle = await bundling;
  const { Miniflare, Log, LogLevel } = await import("miniflare");
  const mf = new Miniflare({
    ...bundle.workerOptions,
    name: bundle.name,
    modules: true,
    scriptPath: bundle.scriptPath,
    // Module names are paths relative to this root; the default (cwd) would put the temp dir at "../..".
    modulesRoot: path.dirname(bundle.scriptPath),
    bindings: { .../** @type {Record<string, unknown>} */ (bundle.workerOptions.bindings), ...vars },
    durableObjectsPersist: persistDir ? path.resolve(persistDir) : false,
    host: "127.0.0.1",
    port: 0,
    // No inspectorPort: no devtools session that workerd would report every subrequest to.
    // cf: false uses Miniflare's built-in request.cf instead of fetching one (no network here).
    cf: false,
    // Miniflare's own warnings and errors; the Worker's console output goes to this process's stdio.
    log: new Log(LogLevel.WARN),
    handleRuntimeStdio: forwardRuntimeOutput,
  });
  let url;
  try {
    url = (await mf.ready).origin;
  } catch (err) {
    await mf.dispose().catch(() => {});
    throw err;
  }
  let stopping;
  return { url, stop: () => (stopping ??= mf.dispose()) };
}

/**
 * workerd's stdout and stderr, line by line, to this process's. Dropped: workerd's own
 * "warning: NOSENTRY" lines, conditions it handles itself and marks as not worth reporting
 * (e.g. an alarm run cancelled because the Durable Object moved its alarm later), which
 * would otherwise interleave with bench tables. Everything the Worker logs, and every
 * runtime error, is kept.
 * @param {import("node:stream").Readable} stdout @param {import("node:stream").Readable} stderr
 */
function forwardRuntimeOutput(stdout, stderr) {
  readline.createInterface({ input: stdout }).on("line", (line) => process.stdout.write(`${line}\n`));
  readline.createInterface({ input: stderr }).on("line", (line) => {
    if (!/^workerd\/\S+: warning: NOSENTRY /.test(line)) process.stderr.write(`${line}\n`);
  });
}

/** @returns {Promise<Bundle>} */
async function buildBundle() {
  await runQuiet([path.join(ROOT, "tools/gen-lua-scripts.mjs")], "node tools/gen-lua-scripts.mjs");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-worker-"));
  process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  // Snapshot the config before bundling, so a rename in wrangler.toml mid-build shows up as a
  // failed start rather than a bundle whose classes the config does not name.
  const toml = fs.readFileSync(path.join(ROOT, "wrangler.toml"), "utf8");
  const out = path.join(dir, "build");
  await runQuiet([WRANGLER_JS, "deploy", "--dry-run", "--outdir", out], "wrangler deploy --dry-run");
  const main = fs.readdirSync(out).find((f) => f.endsWith(".js"));
  if (!main) throw new Error(`wrangler deploy --dry-run wrote no .js file in ${out}`);
  const rewritten = toml.replace(/^main\s*=.*$/m, `main = "build/${main}"`);
  if (rewritten === toml) throw new Error("wrangler.toml has no `main = ...` line");
  // The snapshot lives in the temp dir, so wrangler finds no .dev.vars/.env beside it: the
  // Worker gets exactly wrangler.toml's [vars] (as workerOptions.bindings) plus the caller's vars.
  const configPath = path.join(dir, "wrangler.toml");
  fs.writeFileSync(configPath, rewritten);
  const wrangler = await import("wrangler");
  const config = wrangler.unstable_readConfig({ config: configPath });
  const { workerOptions } = wrangler.unstable_getMiniflareWorkerOptions(config);
  return { dir, name: config.name ?? "worker", scriptPath: path.join(out, main), workerOptions };
}

/**
 * Runs a Node script from the repo root, silently; its output is shown only if it fails.
 * @param {string[]} args @param {string} what
 */
async function runQuiet(args, what) {
  try {
    await run(process.execPath, args, {
      cwd: ROOT,
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", FORCE_COLOR: "0" },
    });
  } catch (err) {
    const e = /** @type {{ code?: unknown, signal?: unknown, stdout?: string, stderr?: string }} */ (err);
    const output = `${e.stdout ?? ""}${e.stderr ?? ""}`.trim().split("\n").slice(-30).join("\n");
    throw new Error(`${what} failed (${e.code ?? e.signal}):\n${output}`);
  }
}
