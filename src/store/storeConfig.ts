import { DEFAULT_STORE_TIMEOUT_MS } from "../deadline.js";
import type { Env } from "../env.js";
import { DurableStore } from "./durable/DurableStore.js";
import { createUpstashClient } from "./redis/createUpstashClient.js";
import { RedisStore } from "./redis/RedisStore.js";
import type { LockStore } from "./types.js";

let cachedRedis: { key: string; store: RedisStore } | undefined;

export function storeTimeoutMs(env: Pick<Env, "STORE_TIMEOUT_MS">): number {
  return Number(env.STORE_TIMEOUT_MS) || DEFAULT_STORE_TIMEOUT_MS;
}

/**
 * The Redis store when both Upstash settings are present, else undefined.
 * Built from the Worker's own configuration, in the Worker and in each lock
 * object alike, and kept per isolate (its client and script cache); nothing
 * of it is ever stored.
 */
export function redisStoreOf(env: Env): RedisStore | undefined {
  const url = env.UPSTASH_REDIS_REST_URL;
  const token = env.UPSTASH_REDIS_REST_TOKEN;
  if (!url || !token) return undefined;
  const timeoutMs = storeTimeoutMs(env);
  const key = `${url} ${token} ${timeoutMs}`;
  if (cachedRedis?.key !== key) {
    cachedRedis = { key, store: new RedisStore(createUpstashClient(url, token, timeoutMs), { timeoutMs }) };
  }
  return cachedRedis.store;
}

/** The store the Worker uses: Redis when configured, else the Durable store (each lock's LockObject). */
export function selectStore(env: Env): LockStore {
  return redisStoreOf(env) ?? new DurableStore(env.LOCK_OBJECT, { timeoutMs: storeTimeoutMs(env) });
}
