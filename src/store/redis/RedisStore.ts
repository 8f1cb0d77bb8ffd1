import type { Redis } from "@upstash/redis";
import type { EveryKindStore } from "../types.js";
import type { OperatorOps } from "../OperatorOps.js";
import type { RedisKinds } from "./RedisKinds.js";
import { redisOperator } from "./redisOperator.js";
import { ScriptRunner } from "./ScriptRunner.js";

export type { RedisKinds } from "./RedisKinds.js";

export interface RedisStoreOptions {
  /** Bound on each store call; past it the call fails with StoreUnavailableError. */
  timeoutMs?: number;
}

/**
 * The Redis store: every lock kind's operations as one Lua script each, run
 * with EVALSHA (EVAL on NOSCRIPT) through @upstash/redis, so one HTTP round
 * trip to Upstash when the script is cached. Works with any @upstash/redis
 * client. The kinds are handed in; `RedisStore` (src/kinds/registry/redisStore.ts,
 * exported by the library) is this with the registry's.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the kinds' operations are assigned in the constructor; the interface below declares them
export class RedisStoreCore {
  readonly kind = "redis" as const;
  private readonly scripts: ScriptRunner;
  readonly operator: OperatorOps;

  constructor(redis: Redis, kinds: RedisKinds, options: RedisStoreOptions = {}) {
    this.scripts = new ScriptRunner(redis, options.timeoutMs);
    this.operator = redisOperator(this.scripts, kinds);
    Object.assign(this, kinds.ops(this.scripts));
  }

  ping(): Promise<void> {
    return this.scripts.ping();
  }
}

// Every kind's operations, one member per kind (handed in: RedisKinds.ops), assigned in the constructor.
export interface RedisStoreCore extends EveryKindStore {}
