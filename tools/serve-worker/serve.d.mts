// Types for serve.mjs, so TypeScript (bench, tests) can import it without allowJs.
// Keep in sync with the JSDoc in serve.mjs.

export interface WorkerServer {
  /** http://127.0.0.1:<port>, no trailing slash */
  url: string;
  /** Disposes workerd and its in-memory Durable Object state. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Serves the Worker (bundled once per process with `wrangler deploy --dry-run`) in workerd
 * through Miniflare, on 127.0.0.1 and a free port, with no inspector.
 * vars: the Worker's vars and secrets, over wrangler.toml's [vars].
 * persistDir: keep Durable Object storage there (default: in memory).
 */
export function startWorkerServer(options: { vars: Record<string, string>; persistDir?: string }): Promise<WorkerServer>;
