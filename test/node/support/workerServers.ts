import { startWorkerServer, type WorkerServer } from "../../../tools/serve-worker/serve.mjs";

export type Stores = Record<"redis" | "durable", WorkerServer>;

/**
 * The Worker served by workerd over real TCP twice, one per store: the Redis
 * store on `upstash` (the URL and token of an Upstash REST endpoint), and the
 * Durable store.
 */
export async function startOnBothStores(vars: Record<string, string>, upstash: { url: string; token: string }): Promise<Stores> {
  const [redis, durable] = await Promise.all([
    startWorkerServer({ vars: { ...vars, UPSTASH_REDIS_REST_URL: upstash.url, UPSTASH_REDIS_REST_TOKEN: upstash.token } }),
    startWorkerServer({ vars }),
  ]);
  return { redis, durable };
}

export async function stopAll(stores: Partial<Stores>): Promise<void> {
  await Promise.all(Object.values(stores).map((s) => s?.stop()));
}

/** Reads until ok (or the time is up, answering the last read): waiting for a condition, not a fixed sleep. */
export async function until<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}
