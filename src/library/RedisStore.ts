import type { Redis } from "@upstash/redis";
import { RedisStoreCore, type RedisStoreOptions } from "../store/redis/RedisStore.js";
import { libraryKinds } from "./kinds.js";

/**
 * The Redis store with every kind of the library (`new RedisStore(redis)`):
 * the core store handed the library's list of kinds.
 */
export class RedisStore extends RedisStoreCore {
  constructor(redis: Redis, options: RedisStoreOptions = {}) {
    super(redis, libraryKinds, options);
  }
}
