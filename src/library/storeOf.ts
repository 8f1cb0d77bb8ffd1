import type { Redis } from "@upstash/redis";
import { RedisStore } from "./RedisStore.js";
import type { LockStore } from "../store/types.js";

/** The primitives take either a store or an @upstash/redis client; this tells them apart. */
export function storeOf(redisOrStore: Redis | LockStore, timeoutMs?: number): LockStore {
  return isStore(redisOrStore) ? redisOrStore : new RedisStore(redisOrStore, { timeoutMs });
}

function isStore(x: Redis | LockStore): x is LockStore {
  const kind = (x as { kind?: unknown }).kind;
  return kind === "redis" || kind === "durable";
}
