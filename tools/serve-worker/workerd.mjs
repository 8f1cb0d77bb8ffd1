// The "workerd" engine of serve.mjs: the bundle under bare `workerd serve`, with a config
// generated here, so a request goes from the socket straight to the Worker. (Miniflare puts
// its own entry worker in front of it, which costs about 0.8 ms per request.)
//
// What the generated config holds, and where it comes from:
// - every module `wrangler deploy --dry-run` emitted, the entry first, typed by wrangler's
//   module rules (serve.mjs lists them);
// - compatibility date and flags, [vars] and Durable Object bindings and classes, from the
//   same wrangler config object the Miniflare engine uses (so migrations decide enableSql);
//   anything else in wrangler.toml (KV, R2, services...) is refused, not silently dropped;
// - a global outbound that may reach loopback and private addresses (the local Upstash
//   gateway and webhook receivers listen on 127.0.0.1; workerd's default blocks them);
// - Durable Object storage on disk: persistDir, or a temp dir removed on stop, as Miniflare
//   does (same directory layout, <dir>/<worker name>-<class>/, so either engine can reopen it).
//   Not workerd's `inMemory` storage: its objects are not SQLite-backed whatever enableSql
//   says, and the lock object's storage.kv calls fail there.
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";

// workerd as wrangler has it: the test integration brings another wrangler with its own
// workerd, so the one hoisted to the top of node_modules may not be the bundler's.
const require = createRequire(createRequire(import.meta.url).resolve("wrangler/package.json"));

/** workerd's path, from wrangler's `workerd` package (which picks the platform package); overridable like Miniflare's. */
export function workerdBinary() {
  if (process.env.MINIFLARE_WORKERD_PATH) return process.env.MINIFLARE_WORKERD_PATH;
  const mod = require("workerd");
  const bin = typeof mod === "string" ? mod : mod.default;
  if (typeof bin !== "string" || !fs.existsSync(bin)) throw new Error(`the workerd package gave no usable binary path (${String(bin)})`);
  return bin;
}

/** @typedef {import("./serve.mjs").Bundle} Bundle */

/**
 * @param {Bundle} bundle
 * @param {{ vars: Record<string, string>, persistDir?: string, port?: number, forwardLine: (line: string, isStderr: boolean) => void, wrap?: string[], v8Flags?: string[] }} options
 * @returns {Promise<import("./serve.mjs").WorkerServer>}
 */
export async function startWorkerd(bundle, { vars, persistDir, port: listenPort = 0, forwardLine, wrap, v8Flags }) {
  // Per server: the config (it holds the vars, secrets included: owner-only, deleted once
  // workerd has read it) and, without persistDir, the Durable Object storage.
  const dir = fs.mkdtempSync(path.join(bundle.dir, "workerd-"));
  const storage = persistDir ? path.resolve(persistDir) : path.join(dir, "do");
  fs.mkdirSync(storage, { recursive: true });
  const configPath = path.join(dir, "config.capnp");
  fs.writeFileSync(configPath, workerdConfig(bundle, { vars, storage, configDir: dir, port: listenPort, v8Flags }), { mode: 0o600 });

  const serve = [workerdBinary(), "serve", "--experimental", "--control-fd=3", configPath, "config"];
  // `wrap`: a command workerd runs under (the bench's callgrind), its arguments before workerd's own.
  const [bin, ...args] = wrap ? [...wrap, ...serve] : serve;
  const proc = launch(bin, args, dir);
  let port;
  try {
    port = await proc.ready;
  } catch (err) {
    await proc.stop();
    throw err;
  } finally {
    fs.rmSync(configPath, { force: true });
  }
  proc.startForwarding(forwardLine);
  return { url: `http://127.0.0.1:${port}`, stop: proc.stop };
}

// ---------------------------------------------------------------------------------------
// The config, as Cap'n Proto text.

const VOID = Symbol("void");
class Embed {
  /** @param {string} file  relative to the config file */
  constructor(file) {
    this.file = file;
  }
}

/** Module kinds, wrangler's rule type -> workerd's Worker.Module field. */
const MODULE_FIELD = /** @type {const} */ ({
  ESModule: "esModule",
  CommonJS: "commonJsModule",
  Text: "text",
  Data: "data",
  CompiledWasm: "wasm",
});

/** Keys of wrangler's Miniflare worker options translated below; any other non-empty one is refused. */
const TRANSLATED = new Set([
  "compatibilityDate",
  "compatibilityFlags",
  "modulesRules",
  "bindings",
  "durableObjects",
  "additionalUnboundDurableObjects",
  "assets",
]);

/**
 * @param {Bundle} bundle
 * @param {{ vars: Record<string, string>, storage: string, configDir: string, port?: number }} options
 * @returns {string}
 */
/**
 * Options left unbound on purpose: the Worker runs without them. Rate-limit
 * bindings are simulated only by Miniflare; without one the Worker does not
 * limit (src/admission/rateLimit.ts), which is what a bench or a client test wants.
 */
const LEFT_UNBOUND = new Set(["ratelimits"]);

/** Options that only tell Miniflare where to resolve relative paths from: the config here embeds resolved paths. */
const PATHS_ONLY = new Set(["rootPath"]);

export function workerdConfig(bundle, { vars, storage, configDir, port = 0, v8Flags }) {
  const o = /** @type {Record<string, any>} */ (bundle.workerOptions);
  const untranslated = Object.keys(o).filter((k) => !TRANSLATED.has(k) && !LEFT_UNBOUND.has(k) && !PATHS_ONLY.has(k) && !isEmpty(o[k]));
  if (untranslated.length) {
    throw new Error(`wrangler.toml configures ${untranslated.join(", ")}, which the workerd engine does not translate; use engine: "miniflare"`);
  }
  if (!o.compatibilityDate) throw new Error("wrangler.toml has no compatibility_date");

  /** @type {Array<{ className: string, useSQLite?: boolean, scriptName?: string, unsafeUniqueKey?: unknown }>} */
  const classes = [];
  const bindings = [];
  for (const [name, designator] of Object.entries(o.durableObjects ?? {})) {
    const d = typeof designator === "string" ? { className: designator } : designator;
    if (d.scriptName !== undefined && d.scriptName !== bundle.name) {
      throw new Error(`Durable Object binding ${name} names a class of another Worker (${d.scriptName}); the workerd engine serves one Worker`);
    }
    bindings.push({ name, durableObjectNamespace: { className: d.className } });
    classes.push(d);
  }
  for (const d of o.additionalUnboundDurableObjects ?? []) classes.push(d);
  /** @type {Map<string, boolean>} className -> enableSql */
  const namespaces = new Map();
  for (const d of classes) namespaces.set(d.className, (namespaces.get(d.className) ?? false) || d.useSQLite === true);

  // Static assets: a disk service over their directory, reached through the binding only (the Worker
  // runs first for every request, as `run_worker_first = true` asks; other routing is not translated).
  const assets = o.assets;
  if (assets && !isEmpty(assets)) {
    // A disk service answers a file by its path, nothing more: the same as the platform's assets only with no
    // html/trailing-slash handling, so any other configuration is left to Miniflare rather than served differently.
    if (!assets.binding || !assets.run_worker_first || assets.assetConfig?.html_handling !== "none") {
      throw new Error(
        'wrangler.toml [assets] needs binding, run_worker_first = true and html_handling = "none" for the workerd engine; use engine: "miniflare"',
      );
    }
    bindings.push({ name: assets.binding, service: "assets" });
  }

  const allVars = { .../** @type {Record<string, unknown>} */ (o.bindings ?? {}), ...vars };
  for (const [name, value] of Object.entries(allVars)) {
    bindings.push(typeof value === "string" ? { name, text: value } : { name, json: JSON.stringify(value) });
  }

  const worker = {
    modules: bundle.modules.map((m) => ({
      name: m.name,
      [MODULE_FIELD[m.type]]: new Embed(path.relative(configDir, path.join(bundle.outDir, m.name)).split(path.sep).join("/")),
    })),
    compatibilityDate: o.compatibilityDate,
    compatibilityFlags: o.compatibilityFlags ?? [],
    bindings,
    durableObjectNamespaces: [...namespaces].map(([className, enableSql]) => ({
      className,
      // Miniflare's key, so storage written by either engine is found by the other.
      uniqueKey: `${bundle.name}-${className}`,
      enableSql,
    })),
    durableObjectStorage: namespaces.size ? { localDisk: "do-storage" } : { none: VOID },
    globalOutbound: "internet",
  };
  const services = [
    { name: bundle.name, worker },
    {
      name: "internet",
      network: {
        // workerd's default "internet" allows only public addresses; the Worker must reach
        // the local Upstash gateway and webhook receivers on 127.0.0.1 ("private" includes
        // loopback). The same list as Miniflare's.
        allow: ["public", "private", "240.0.0.0/4"],
        tlsOptions: { trustBrowserCas: true },
      },
    },
  ];
  if (namespaces.size) services.push({ name: "do-storage", disk: { path: storage, writable: true } });
  if (assets && !isEmpty(assets)) services.push({ name: "assets", disk: { path: assets.directory } });
  const config = {
    services,
    sockets: [{ name: "http", address: `127.0.0.1:${port}`, http: {}, service: bundle.name }],
    ...(v8Flags?.length ? { v8Flags } : {}),
  };
  return `# Generated by tools/serve-worker/workerd.mjs\nusing Workerd = import "/workerd/workerd.capnp";\nconst config :Workerd.Config = ${capnp(config, "")};\n`;
}

/** @param {unknown} v */
function isEmpty(v) {
  if (v === undefined || v === null || v === false) return true;
  if (Array.isArray(v)) return v.every(isEmpty);
  if (typeof v === "object") return Object.values(v).every(isEmpty);
  return false;
}

/**
 * A JS value as a Cap'n Proto text literal: objects are structs, arrays lists.
 * @param {unknown} v @param {string} indent @returns {string}
 */
function capnp(v, indent) {
  const inner = `${indent}  `;
  if (v === VOID) return "void";
  if (v instanceof Embed) return `embed ${capnpString(v.file)}`;
  if (typeof v === "string") return capnpString(v);
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (Array.isArray(v)) return v.length ? `[\n${v.map((x) => `${inner}${capnp(x, inner)}`).join(",\n")},\n${indent}]` : "[]";
  if (v && typeof v === "object") {
    const fields = Object.entries(v).filter(([, x]) => x !== undefined);
    if (!fields.length) return "()";
    return `(\n${fields.map(([k, x]) => `${inner}${k} = ${capnp(x, inner)}`).join(",\n")},\n${indent})`;
  }
  throw new Error(`cannot write ${String(v)} in a workerd config`);
}

/**
 * A Cap'n Proto string literal. The text is UTF-8 as is; escaped: backslash, double quote and
 * control characters (\xHH). NUL cannot be carried by a capnp Text value.
 * @param {string} s
 */
export function capnpString(s) {
  if (s.includes("\0")) throw new Error("a workerd config string cannot hold a NUL character");
  // eslint-disable-next-line no-control-regex
  return `"${s.replace(/[\\"\x00-\x1f\x7f]/g, (c) => (c === "\\" || c === '"' ? `\\${c}` : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`))}"`;
}

// ---------------------------------------------------------------------------------------
// The process.

/**
 * POSIX: workerd runs under a small sh that, in its own process group, kills workerd as soon
 * as this process's end of its stdin pipe closes, however this process ends (exit, crash,
 * Ctrl-C, SIGKILL): 'exit' handlers alone miss signals. sh exits with workerd's status.
 * fd 3 (the control pipe) and stdout/stderr are workerd's; the watchdog keeps none of them.
 */
const WATCHDOG = 'exec 4<&0 </dev/null; "$0" "$@" 4<&- & w=$!; { read -r _ <&4; kill -KILL "$w"; } 3>&- >/dev/null 2>&1 & exec 4<&-; wait "$w"';

/** @type {Set<() => void>} */
const live = new Set();
let exitHookInstalled = false;

/**
 * Starts workerd and reads the port its socket listens on from the control pipe (workerd
 * writes {"event":"listen","socket":"http","port":N} once it accepts connections; binding
 * port 0 itself avoids racing another process for a port picked beforehand).
 * @param {string} bin @param {string[]} args @param {string} tmpDir  removed on stop
 */
function launch(bin, args, tmpDir) {
  const posix = process.platform !== "win32";
  const child = posix
    ? spawn("/bin/sh", ["-c", WATCHDOG, bin, ...args], { stdio: ["pipe", "pipe", "pipe", "pipe"], detached: true })
    : spawn(bin, args, { stdio: ["pipe", "pipe", "pipe", "pipe"] });
  /** @type {Promise<string>} */
  const exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`));
    child.once("error", (err) => resolve(err.message)); // e.g. ENOENT: there is no 'exit' then
  });
  // Gone for good once both output pipes are closed: only workerd holds their write ends.
  const drained = Promise.all([child.stdout, child.stderr].map((s) => new Promise((r) => s.once("close", r))));

  // Startup output is held back: shown as it was if workerd starts, in the error if not.
  /** @type {Array<[string, boolean]>} */
  const held = [];
  /** @type {(line: string, isStderr: boolean) => void} */
  let sink = (line, isStderr) => {
    held.push([line, isStderr]);
    if (held.length > 200) held.shift();
  };
  readline.createInterface({ input: child.stdout }).on("line", (l) => sink(l, false));
  readline.createInterface({ input: child.stderr }).on("line", (l) => sink(l, true));
  const heldText = () =>
    held
      .map(([l]) => l)
      .join("\n")
      .trim();

  const killGroup = (/** @type {NodeJS.Signals} */ signal) => {
    try {
      if (child.pid) posix ? process.kill(-child.pid, signal) : child.kill(signal);
    } catch {} // already gone
  };
  const onExit = () => {
    killGroup("SIGKILL");
    fs.rmSync(tmpDir, { recursive: true, force: true });
  };
  live.add(onExit);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const f of live) f();
    });
  }

  /** @type {Promise<void> | undefined} */
  let stopping;
  const stop = () =>
    (stopping ??= (async () => {
      killGroup("SIGTERM");
      const killer = setTimeout(() => killGroup("SIGKILL"), 3000);
      await Promise.all([exited, drained]);
      clearTimeout(killer);
      killGroup("SIGKILL"); // the watchdog, if workerd ended by itself
      child.stdin?.destroy();
      child.stdio[3]?.destroy();
      live.delete(onExit);
      fs.rmSync(tmpDir, { recursive: true, force: true });
    })());

  /** @type {Promise<number>} */
  const ready = new Promise((resolve, reject) => {
    const control = /** @type {import("node:stream").Readable} */ (child.stdio[3]);
    const fail = (/** @type {string} */ why) => {
      clearTimeout(timer);
      // let the last output lines arrive before quoting them
      setTimeout(() => reject(new Error(`workerd ${why}${heldText() ? `:\n${heldText()}` : " (no output)"}`)), 50);
    };
    const timer = setTimeout(() => fail("did not listen within 60 s"), 60_000);
    readline.createInterface({ input: control }).on("line", (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      if (msg?.event === "listen" && msg.socket === "http" && typeof msg.port === "number") {
        clearTimeout(timer);
        resolve(msg.port);
      }
    });
    exited.then((how) => fail(`exited (${how}) before listening`)); // no-op once resolved
  });
  ready.catch(() => {}); // handled by the caller; avoids an unhandled rejection if it stops first

  /** Replays the startup output to `forward`, then passes it every further line. @param {(line: string, isStderr: boolean) => void} forward */
  const startForwarding = (forward) => {
    for (const [line, isStderr] of held) forward(line, isStderr);
    held.length = 0;
    sink = forward;
  };

  return { ready, stop, startForwarding };
}

/** A package as wrangler resolves it (workerd, miniflare): the versions that bundle and serve belong together. */
export function resolveBesideWrangler(pkg) {
  return require.resolve(pkg);
}
