import type { Env } from "../env";
import { DEFAULT_STORE_TIMEOUT_MS } from "../deadline";
import { DurableStore } from "./durable/DurableStore";
import { createUpstashClient } from "./redis/createUpstashClient";
import { RedisStore } from "./redis/RedisStore";
import type { LockStore } from "./types";

/**
 * Which store answers, as plain data: the Worker hands it to a LockRoom so
 * the room acts on the same store as the request that woke it.
 */
export interface StoreConfig {
  upstashUrl?: string;
  upstashToken?: string;
  timeoutMs: number;
}

export function storeConfigOf(env: Env): StoreConfig {
  const timeoutMs = Number(env.STORE_TIMEOUT_MS) || DEFAULT_STORE_TIMEOUT_MS;
  const url = env.UPSTASH_REDIS_REST_URL;
  const token = env.UPSTASH_REDIS_REST_TOKEN;
  return url && token ? { upstashUrl: url, upstashToken: token, timeoutMs } : { timeoutMs };
}

let cachedRedis: { key: string; store: RedisStore } | undefined;

/**
 * The Redis store when both Upstash settings are present, the Durable store
 * otherwise. The Redis store (its client and script cache) is kept per
 * isolate and configuration; the Durable store is only a binding wrapper.
 */
export function storeFrom(config: StoreConfig, env: Pick<Env, "LOCK_STATE">): LockStore {
  const { upstashUrl: url, upstashToken: token, timeoutMs } = config;
  if (!url || !token) return new DurableStore(env.LOCK_STATE, { timeoutMs });
  const key = `${url} ${token} ${timeoutMs}`;
  if (cachedRedis?.key !== key) {
    cachedRedis = { key, store: new RedisStore(createUpstashClient(url, token, timeoutMs), { timeoutMs }) };
  }
  return cachedRedis.store;
}

export function selectStore(env: Env): LockStore {
  return storeFrom(storeConfigOf(env), env);
}
