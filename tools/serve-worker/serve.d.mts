// Types for serve.mjs, so TypeScript (bench, tests) can import it without allowJs.
// Keep in sync with the JSDoc in serve.mjs.

export interface WorkerServer {
  /** http://127.0.0.1:<port>, no trailing slash */
  url: string;
  /** Stops workerd and drops its in-memory Durable Object state. Idempotent. */
  stop(): Promise<void>;
}

/**
 * What runs the bundle: "workerd" (default) is bare `workerd serve` with a generated config;
 * "miniflare" is workerd through Miniflare's Node API, with Miniflare's entry worker in front.
 */
export type Engine = "workerd" | "miniflare";

/** The engine a call with this `engine` option uses: the option, else $HOLDFAST_SERVE_ENGINE, else "workerd". */
export function resolveEngine(requested?: string): Engine;

/**
 * Serves the Worker (bundled once per process with `wrangler deploy --dry-run`) in workerd,
 * on 127.0.0.1 and a free port, with no inspector.
 * vars: the Worker's vars and secrets, over wrangler.toml's [vars].
 * persistDir: keep Durable Object storage there (default: dropped on stop).
 * engine: see resolveEngine.
 * projectDir: the Worker project to bundle (its wrangler.toml and node_modules), default this repository.
 * port: listen there (workerd engine; default a free port).
 * wrap: a command (with its arguments) workerd runs under, such as valgrind (workerd engine only).
 * v8Flags: flags for V8, such as --single-threaded (workerd engine only).
 */
export function startWorkerServer(options: {
  vars: Record<string, string>;
  persistDir?: string;
  engine?: Engine;
  projectDir?: string;
  port?: number;
  wrap?: string[];
  v8Flags?: string[];
}): Promise<WorkerServer>;

/** One module of the bundle: its path relative to outDir (the entry first) and its type. */
export interface BundleModule {
  name: string;
  type: "ESModule" | "CommonJS" | "Text" | "Data" | "CompiledWasm";
}

/** What `wrangler deploy --dry-run` wrote for a Worker project. */
export interface Bundle {
  dir: string;
  name: string;
  outDir: string;
  scriptPath: string;
  modules: BundleModule[];
  workerOptions: Record<string, unknown>;
}

/** The Worker project's bundle as `wrangler deploy` would upload it, built once per process. */
export function bundleWorker(projectDir?: string): Promise<Bundle>;

/** A package's entry as wrangler resolves it (workerd, miniflare): the versions that bundle and serve belong together. */
export function resolveBesideWrangler(pkg: string): string;
