import type { Redis } from "@upstash/redis";
import type { KindName, KindOps } from "../../kinds/registry/ops.js";
import type { LockRef } from "../LockRef.js";
import type { EveryKindStore } from "../types.js";
import type { OperatorOps } from "../OperatorOps.js";
import { redisOperator } from "./redisOperator.js";
import { ScriptRunner } from "./ScriptRunner.js";

export interface RedisStoreOptions {
  /** Bound on each store call; past it the call fails with StoreUnavailableError. */
  timeoutMs?: number;
}

/** What the Redis store is handed of the kinds (by src/kinds/registry/stores.ts): it names none itself. */
export interface RedisKinds {
  /** Each kind's operations, its scripts through one runner. */
  ops(scripts: ScriptRunner): KindOps;
  /** Each kind's main key in Redis, the one that exists while a lock is held (or a key stored). */
  mainKeys: Record<KindName, (ref: LockRef) => string>;
  /** Which keys of a lock (after its main key's closing brace) say a listing shows it. */
  listedSuffixes: Record<KindName, string[]>;
}

/**
 * The Redis store: every lock kind's operations as one Lua script each, run
 * with EVALSHA (EVAL on NOSCRIPT) through @upstash/redis, so one HTTP round
 * trip to Upstash when the script is cached. Works with any @upstash/redis
 * client. The kinds are handed in; `RedisStore` (src/kinds/registry/stores.ts,
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
