import { inject } from "vitest";
import { pollUntil } from "./pollUntil";
import { LOCAL_API_KEY } from "../../tools/dev/local.mjs";
import { startWorkerServer, type WorkerServer } from "../../tools/serve-worker/serve.mjs";

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

/** API_KEYS for one key per namespace: { namespace: key } as "namespace=key,...". */
function apiKeysOf(keys: Record<string, string>): string {
  return Object.entries(keys)
    .map(([ns, key]) => `${ns}=${key}`)
    .join(",");
}

/** Both stores with one key per namespace (and these vars), the Redis store on the suite's shared stack. */
export function startForKeys(keys: Record<string, string>, vars: Record<string, string> = {}): Promise<Stores> {
  return startOnBothStores({ API_KEYS: apiKeysOf(keys), ...vars }, { url: inject("upstashUrl"), token: inject("upstashToken") });
}

export async function stopAll(stores: Partial<Stores>): Promise<void> {
  await Promise.all(Object.values(stores).map((s) => s?.stop()));
}

/** Reads until ok; throws with the last read when the time is up (pollUntil): waiting for a condition, not a fixed sleep. */
export function until<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  return pollUntil(read, ok, timeoutMs);
}

/**
 * The Worker as `npm start` serves it, with its local admin key (LOCAL_API_KEY, namespace "default"),
 * over the suite's Redis (`npm run start:redis`'s store): a deployed holdfast service, as an app's
 * HoldfastClient reaches it over TCP.
 */
export function startLocalService(): Promise<WorkerServer> {
  const upstash = { UPSTASH_REDIS_REST_URL: inject("upstashUrl"), UPSTASH_REDIS_REST_TOKEN: inject("upstashToken") };
  return startWorkerServer({ vars: { API_KEYS: `default:admin:local-dev=${LOCAL_API_KEY}`, ...upstash } });
}
