import type { Redis } from "@upstash/redis";
import type { RedisStoreOf } from "../store/redis/RedisKinds.js";
import { RedisStoreCore, type RedisStoreOptions } from "../store/redis/RedisStore.js";
import { moduleScriptTexts } from "../store/redis/moduleScripts.js";
import { libraryKinds } from "./kinds.js";

/** The Redis store with every kind of the library as a member, typed by its list (`store.mutex`). */
export type RedisStore = RedisStoreOf<typeof libraryKinds, RedisStoreCore>;

/**
 * The Redis store with every kind of the library (`new RedisStore(redis)`):
 * the core store handed the library's list of kinds. Its members are the
 * list's, added at run time by the core store (withKinds); the constructor's
 * type says so, as a class cannot declare members it learns from a list.
 */
export const RedisStore = class RedisStore extends RedisStoreCore {
  constructor(redis: Redis, options: RedisStoreOptions = {}) {
    super(redis, libraryKinds, { ...options, scriptTexts: moduleScriptTexts });
  }
} as new (
  redis: Redis,
  options?: RedisStoreOptions,
) => RedisStore;
