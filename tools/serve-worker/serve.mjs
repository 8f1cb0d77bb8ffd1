// Serves the Worker the way production runs it: the bundle `wrangler deploy`
// would upload, in workerd, without `wrangler dev`'s proxy worker, inspector
// and file watcher. For benchmarks, and for Node tests that need a real TCP
// client in front of the Worker.
//
// Two engines run the same bundle:
// - "workerd" (default): bare `workerd serve` with a config generated from the
//   bundle and wrangler.toml (workerd.mjs); requests reach the Worker directly.
// - "miniflare": Miniflare's Node API, which puts its own entry worker in front
//   of the Worker (about 0.8 ms more per request).
// Chosen by the `engine` option, else the HOLDFAST_SERVE_ENGINE environment
// variable (e.g. to run the bench on Miniflare), else "workerd".
//
// The Worker is bundled once per process (the first call), so edits to src/
// during a run do not reload it; the wrangler.toml it was bundled with is
// snapshotted next to the bundle, so compatibility date, flags and Durable
// Object bindings/migrations always match the classes the bundle exports.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import readline from "node:readline";
import { promisify } from "node:util";
import { resolveBesideWrangler, startWorkerd } from "./workerd.mjs";

export { resolveBesideWrangler };

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const WRANGLER_JS = path.join(ROOT, "node_modules/wrangler/bin/wrangler.js");

/**
 * @typedef {object} WorkerServer
 * @property {string} url  http://127.0.0.1:<port>, no trailing slash
 * @property {() => Promise<void>} stop  stops workerd and drops its in-memory state (idempotent)
 */

/** @typedef {"workerd" | "miniflare"} Engine */

/**
 * @typedef {object} BundleModule
 * @property {string} name  path relative to outDir, with "/"; the entry comes first
 * @property {"ESModule" | "CommonJS" | "Text" | "Data" | "CompiledWasm"} type
 */

/**
 * @typedef {object} Bundle
 * @property {string} dir  temp dir holding the build and the wrangler.toml snapshot
 * @property {string} name  the Worker's name from wrangler.toml
 * @property {string} outDir  what `wrangler deploy --dry-run` wrote
 * @property {string} scriptPath  the bundled entry module
 * @property {BundleModule[]} modules  every module in outDir, the entry first
 * @property {Record<string, unknown>} workerOptions  Miniflare worker options from the config, without script;
 *   its bindings are wrangler.toml's [vars]
 */

/** Bundles by project directory (this repository, or a consumer project of the package check). @type {Map<string, Promise<Bundle>>} */
const bundling = new Map();

const ENGINES = /** @type {const} */ (["workerd", "miniflare"]);

/**
 * The engine a call with this `engine` option uses: the option, else $HOLDFAST_SERVE_ENGINE, else "workerd".
 * @param {string} [requested] @returns {Engine}
 */
export function resolveEngine(requested) {
  const engine = requested ?? (process.env.HOLDFAST_SERVE_ENGINE || "workerd");
  if (!(/** @type {readonly string[]} */ (ENGINES).includes(engine))) {
    const from = requested === undefined ? "HOLDFAST_SERVE_ENGINE" : "engine";
    throw new Error(`${from}: unknown engine ${JSON.stringify(engine)}, expected ${ENGINES.map((e) => `"${e}"`).join(" or ")}`);
  }
  return /** @type {Engine} */ (engine);
}

/**
 * Starts the Worker on 127.0.0.1, on `port` (workerd engine) or a free port.
 * @param {{ vars: Record<string, string>, persistDir?: string, engine?: Engine, projectDir?: string, port?: number, wrap?: string[], v8Flags?: string[] }} options
 *   vars: the Worker's vars and secrets (API_KEYS, WEBHOOK_SECRET, UPSTASH_REDIS_REST_URL/TOKEN...),
 *   over wrangler.toml's [vars]; persistDir: keep Durable Object storage there (default: dropped on
 *   stop), in the same layout under both engines; engine: see resolveEngine; projectDir: the
 *   Worker project to bundle (its wrangler.toml and node_modules), default this repository; wrap: a
 *   command (with its arguments) workerd runs under, such as valgrind; v8Flags: flags for V8 (both workerd engine only).
 * @returns {Promise<WorkerServer>}
 */
export async function startWorkerServer({ vars, persistDir, engine, projectDir = ROOT, port, wrap, v8Flags }) {
  const chosen = resolveEngine(engine);
  const bundle = await bundleWorker(projectDir);
  if (chosen === "workerd") return startWorkerd(bundle, { vars, persistDir, port, forwardLine: forwardRuntimeLine, wrap, v8Flags });
  if (wrap || v8Flags) throw new Error("wrap, v8Flags: only the workerd engine takes them");
  return startMiniflare(bundle, { vars, persistDir });
}

/**
 * The Worker project's bundle as `wrangler deploy` would upload it, built once per process; in a
 * test run, this repository's is the run's one bundle, asked of $HOLDFAST_WORKER_BUNDLE_URL
 * (sharedBundle.mjs).
 * @param {string} [projectDir] default this repository @returns {Promise<Bundle>}
 */
export function bundleWorker(projectDir = ROOT) {
  const dir = path.resolve(projectDir);
  if (!bundling.has(dir)) {
    const shared = dir === ROOT ? process.env.HOLDFAST_WORKER_BUNDLE_URL : undefined;
    bundling.set(
      dir,
      (shared ? sharedBundle(shared) : buildBundle(dir)).catch((err) => {
        bundling.delete(dir); // let a later call try again (e.g. after a syntax error is fixed)
        throw err;
      }),
    );
  }
  return /** @type {Promise<Bundle>} */ (bundling.get(dir));
}

/**
 * @param {Bundle} bundle @param {{ vars: Record<string, string>, persistDir?: string }} options
 * @returns {Promise<WorkerServer>}
 */
async function startMiniflare(bundle, { vars, persistDir }) {
  const { Miniflare, Log, LogLevel } = await import(pathToFileURL(resolveBesideWrangler("miniflare")).href);
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
    handleRuntimeStdio: (stdout, stderr) => {
      readline.createInterface({ input: stdout }).on("line", (line) => forwardRuntimeLine(line, false));
      readline.createInterface({ input: stderr }).on("line", (line) => forwardRuntimeLine(line, true));
    },
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
 * A line of workerd's stdout or stderr, to this process's. Dropped: workerd's own
 * "warning: NOSENTRY" lines, conditions it handles itself and marks as not worth reporting
 * (e.g. an alarm run cancelled because the Durable Object moved its alarm later), which
 * would otherwise interleave with bench tables. Everything the Worker logs, and every
 * runtime error, is kept.
 * @param {string} line @param {boolean} isStderr
 */
function forwardRuntimeLine(line, isStderr) {
  // Through console, so a test runner's log filter (vitest.config.ts EXPECTED_LOGS) sees these lines too.
  if (!isStderr) console.log(line);
  else if (!/^workerd\/\S+: warning: NOSENTRY /.test(line)) console.error(line);
}

/** The test run's bundle, from the run's main process (sharedBundle.mjs). @param {string} url @returns {Promise<Bundle>} */
async function sharedBundle(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`the test run's Worker bundle (${url}): ${await res.text()}`);
  return /** @type {Promise<Bundle>} */ (res.json());
}

/** Builds the bundle afresh (bundleWorker keeps the first one of a process). @param {string} projectDir @returns {Promise<Bundle>} */
export async function buildBundle(projectDir) {
  if (projectDir === ROOT) await runQuiet([path.join(ROOT, "tools/generate.mjs")], "node tools/generate.mjs", ROOT);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-worker-"));
  process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  // Snapshot the config before bundling, so a rename in wrangler.toml mid-build shows up as a
  // failed start rather than a bundle whose classes the config does not name.
  const toml = fs.readFileSync(path.join(projectDir, "wrangler.toml"), "utf8");
  const out = path.join(dir, "build");
  await runQuiet([WRANGLER_JS, "deploy", "--dry-run", "--outdir", out], "wrangler deploy --dry-run", projectDir);
  const main = entryModule(toml, out);
  const withMain = toml.replace(/^main\s*=.*$/m, `main = "build/${main}"`);
  if (withMain === toml) throw new Error("wrangler.toml has no `main = ...` line");
  // Static assets stay where they are: their directory, relative to the project, made absolute.
  const rewritten = withMain.replace(/^(directory\s*=\s*)"(.*)"\s*$/m, (_, key, dir) => `${key}${JSON.stringify(path.resolve(projectDir, dir))}`);
  // The snapshot lives in the temp dir, so wrangler finds no .dev.vars/.env beside it: the
  // Worker gets exactly wrangler.toml's [vars] (as workerOptions.bindings) plus the caller's vars.
  const configPath = path.join(dir, "wrangler.toml");
  fs.writeFileSync(configPath, rewritten);
  const wrangler = await import("wrangler");
  const config = wrangler.unstable_readConfig({ config: configPath });
  const { workerOptions } = wrangler.unstable_getMiniflareWorkerOptions(config);
  const modules = listModules(out, main, /** @type {Rule[]} */ (workerOptions.modulesRules ?? []));
  return { dir, name: config.name ?? "worker", outDir: out, scriptPath: path.join(out, main), modules, workerOptions };
}

/**
 * The entry module wrangler emitted: <basename of wrangler.toml's main>.js, or the only .js file.
 * @param {string} toml @param {string} out
 */
function entryModule(toml, out) {
  const declared = /^main\s*=\s*["']([^"']+)["']/m.exec(toml)?.[1];
  const expected = declared && `${path.basename(declared, path.extname(declared))}.js`;
  if (expected && fs.existsSync(path.join(out, expected))) return expected;
  const js = fs.readdirSync(out).filter((f) => f.endsWith(".js"));
  if (js.length !== 1)
    throw new Error(`wrangler deploy --dry-run wrote ${js.length ? js.join(", ") : "no .js file"} in ${out}; cannot tell the entry module`);
  return js[0];
}

/** @typedef {{ type: string, include: string[] }} Rule */

/**
 * Every module wrangler wrote to `out` (its README and source maps are not modules), the
 * entry first, typed as wrangler types them: its module rules (wrangler.toml's [[rules]]
 * over its defaults: .txt/.html/.sql text, .bin data, .wasm compiled Wasm), .js/.mjs ES modules, .cjs CommonJS.
 * @param {string} out @param {string} main @param {Rule[]} rules @returns {BundleModule[]}
 */
function listModules(out, main, rules) {
  /** @type {Array<[RegExp, BundleModule["type"]]>} */
  const typed = [];
  for (const rule of rules) for (const glob of rule.include) typed.push([globToRegExp(glob), /** @type {BundleModule["type"]} */ (rule.type)]);
  typed.push([/\.m?js$/, "ESModule"], [/\.cjs$/, "CommonJS"]);
  /** @type {BundleModule[]} */
  const modules = [];
  for (const file of /** @type {string[]} */ (fs.readdirSync(out, { recursive: true }))) {
    const name = file.split(path.sep).join("/");
    if (fs.statSync(path.join(out, file)).isDirectory() || name.endsWith(".map") || name === "README.md") continue;
    const type = typed.find(([re]) => re.test(name))?.[1];
    if (!type || !["ESModule", "CommonJS", "Text", "Data", "CompiledWasm"].includes(type)) {
      throw new Error(`wrangler deploy --dry-run wrote ${name}, a module of type ${type ?? "unknown"}, which serve.mjs cannot load`);
    }
    modules.push({ name, type });
  }
  modules.sort((a, b) => Number(b.name === main) - Number(a.name === main));
  if (modules[0]?.name !== main || modules[0].type !== "ESModule") throw new Error(`the entry module ${main} is missing or not an ES module`);
  return modules;
}

/** wrangler's module rule globs ("**\/*.wasm"): "**\/" any directories, "*" within a name. @param {string} glob */
function globToRegExp(glob) {
  const re = glob
    .replace(/[.+^${}()|[\]\\?]/g, "\\$&")
    .replace(/\*\*\//g, "\0")
    .replace(/\*/g, "[^/]*")
    .replace(/\0/g, "(?:.*/)?");
  return new RegExp(`^${re}$`);
}

/**
 * Runs a Node script from the repo root, silently; its output is shown only if it fails.
 * @param {string[]} args @param {string} what @param {string} cwd
 */
async function runQuiet(args, what, cwd) {
  try {
    await run(process.execPath, args, {
      cwd,
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
