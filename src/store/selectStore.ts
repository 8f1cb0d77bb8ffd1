import type { Env } from "../env";
import { DEFAULT_STORE_TIMEOUT_MS } from "../deadline";
import { DurableStore } from "./durable/DurableStore";
import { createUpstashClient } from "./redis/createUpstashClient";
import { RedisStore } from "./redis/RedisStore";
import type { LockStore } from "./types";

let cachedRedis: { config: string; store: RedisStore } | undefined;

/**
 * The Redis store when both Upstash variables are set, the Durable store
 * otherwise. The Redis store (its client and script cache) is kept per
 * isolate and configuration; the Durable store is only a binding wrapper.
 */
export function selectStore(env: Env): LockStore {
  const timeoutMs = Number(env.STORE_TIMEOUT_MS) || DEFAULT_STORE_TIMEOUT_MS;
  const url = env.UPSTASH_REDIS_REST_URL;
  const token = env.UPSTASH_REDIS_REST_TOKEN;
  if (!url || !token) return new DurableStore(env.LOCK_STATE, { timeoutMs });
  const config = `${url} ${token} ${timeoutMs}`;
  if (cachedRedis?.config !== config) {
    cachedRedis = { config, store: new RedisStore(createUpstashClient(url, token, timeoutMs), { timeoutMs }) };
  }
  return cachedRedis.store;
}
