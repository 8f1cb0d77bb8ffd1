import type { Redis } from "@upstash/redis";
import { RedisStoreCore, type RedisStoreOptions } from "../../store/redis/RedisStore.js";
import { redisKinds } from "./redis.js";

/**
 * The Redis store with every kind of the registry (the library's RedisStore:
 * `new RedisStore(redis)`); the core store is handed them (RedisStoreCore).
 */
export class RedisStore extends RedisStoreCore {
  constructor(redis: Redis, options: RedisStoreOptions = {}) {
    super(redis, redisKinds, options);
  }
}
