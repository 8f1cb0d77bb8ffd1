import type { Redis } from "@upstash/redis";
import { redisKinds } from "../../kinds/registry/redis.js";
import type { EveryKindStore } from "../types.js";
import type { OperatorOps } from "../OperatorOps.js";
import { redisOperator } from "./redisOperator.js";
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
export class RedisStore {
  readonly kind = "redis" as const;
  private readonly scripts: ScriptRunner;
  readonly operator: OperatorOps;

  constructor(redis: Redis, options: RedisStoreOptions = {}) {
    this.scripts = new ScriptRunner(redis, options.timeoutMs);
    this.operator = redisOperator(this.scripts);
    Object.assign(this, redisKinds(this.scripts));
  }

  ping(): Promise<void> {
    return this.scripts.ping();
  }
}

// Every kind's operations, one member per kind (src/kinds/registry/redis.ts), assigned in the constructor.
export interface RedisStore extends EveryKindStore {}
