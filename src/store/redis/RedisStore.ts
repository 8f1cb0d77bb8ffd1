import type { Redis } from "@upstash/redis";
import { redisIdempotency } from "../../kinds/idempotency/redisIdempotency.js";
import { redisMutex } from "../../kinds/mutex/redisMutex.js";
import { redisRwlock } from "../../kinds/rwlock/redisRwlock.js";
import { redisSemaphore } from "../../kinds/semaphore/redisSemaphore.js";
import type { LockStore } from "../types.js";
import { ScriptRunner } from "./ScriptRunner.js";

export interface RedisStoreOptions {
  /** Bound on each store call; past it the call fails with StoreUnavailableError. */
  timeoutMs?: number;
}

/**
 * The Redis store: every lock kind's operations as one Lua script each, run
 * with EVALSHA (EVAL on NOSCRIPT) through @upstash/redis, so one HTTP round
 * trip to Upstash when the script is cached. Works with any @upstash/redis
 * client.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the kinds' operations are assigned in the constructor; the interface below declares them
export class RedisStore implements LockStore {
  readonly kind = "redis" as const;
  private readonly scripts: ScriptRunner;

  constructor(redis: Redis, options: RedisStoreOptions = {}) {
    this.scripts = new ScriptRunner(redis, options.timeoutMs);
    Object.assign(this, redisMutex(this.scripts), redisIdempotency(this.scripts), redisRwlock(this.scripts), redisSemaphore(this.scripts));
  }

  ping(): Promise<void> {
    return this.scripts.ping();
  }
}

// The kinds' operations are assigned in the constructor.
export interface RedisStore extends LockStore {}
