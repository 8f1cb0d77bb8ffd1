import type { Redis } from "@upstash/redis";
import type { KindName } from "../kinds.js";
import type { LockRef } from "../types.js";
import { type StoreCore, withKinds } from "../types.js";
import type { OperatorOps } from "../OperatorOps.js";
import { type RedisKind, type RedisKinds, redisKindsOf } from "./RedisKinds.js";
import { redisOperator } from "./redisOperator.js";
import { ScriptRunner, type ScriptTexts } from "./ScriptRunner.js";

export type { RedisKind } from "./RedisKinds.js";

export interface RedisStoreOptions {
  /** Bound on each store call; past it the call fails with StoreUnavailableError. */
  timeoutMs?: number;
}

/** The core store's options: also where its scripts' texts come from (ScriptTexts), which the library and the Worker each hand in. */
export interface RedisStoreCoreOptions extends RedisStoreOptions {
  scriptTexts: ScriptTexts;
}

/**
 * The Redis store: every lock kind's operations as one Lua script each, run
 * with EVALSHA (EVAL on NOSCRIPT) through @upstash/redis, so one HTTP round
 * trip to Upstash when the script is cached. Works with any @upstash/redis
 * client. The kinds are handed in; `RedisStore` (src/library/RedisStore.ts,
 * exported by the library) is this with the library's list.
 */
export class RedisStoreCore implements StoreCore {
  readonly kind = "redis" as const;
  private readonly scripts: ScriptRunner;
  readonly operator: OperatorOps;
  /** This store as the Worker's requests use it (watchedResults): made at the first ask, then kept. */
  private noting: RedisStoreCore | undefined;

  private readonly kinds: RedisKinds;

  constructor(redis: Redis, kinds: readonly RedisKind[] | RedisKinds, options: RedisStoreCoreOptions, notesWatchers = false) {
    this.kinds = kinds instanceof Map ? kinds : redisKindsOf(kinds as readonly RedisKind[]);
    this.scripts = new ScriptRunner(redis, options.scriptTexts, options.timeoutMs, notesWatchers);
    this.operator = redisOperator(this.scripts, this.kinds);
    withKinds(
      this,
      [...this.kinds].map(([name, kind]) => ({ name, ops: kind.ops(this.scripts) })),
    );
  }

  /** The kinds this store has, by name. */
  get kindNames(): KindName[] {
    return [...this.kinds.keys()];
  }

  /**
   * The same database, whose writes also pass each lock's watchers key and
   * mark a result whose lock has watch sockets (watchedResults.ts): the
   * Worker's (changeNotes.ts). The library's and the lock
   * objects' writes pass no such key (the object sees its own writes).
   */
  notingWatchers(): this {
    if (this.scripts.notesWatchers) return this;
    // The same kinds, so the same members as this store: its type is this one's.
    const { redis, texts, timeoutMs } = this.scripts;
    this.noting ??= new RedisStoreCore(redis, this.kinds, { scriptTexts: texts, timeoutMs }, true);
    return this.noting as this;
  }

  private kindOf(kind: KindName): RedisKind["redis"] {
    const found = this.kinds.get(kind);
    if (!found) throw new Error(`the Redis store has no kind ${kind}`);
    return found;
  }

  ping(): Promise<void> {
    return this.scripts.ping();
  }

  /**
   * The lock object's: sets the lock's watchers key to live `ms` (renewed
   * while it has watch sockets), or deletes it (`ms` undefined) when the last
   * one left. While it exists the Worker's writes of the lock answer that it
   * does (notingWatchers), and the Worker tells the object.
   */
  async markWatchers(kind: KindName, ref: LockRef, ms: number | undefined): Promise<void> {
    const key = this.kindOf(kind).watcherKey(ref);
    if (ms === undefined) await this.scripts.command("watchers key", (redis) => redis.del(key));
    else await this.scripts.command("watchers key", (redis) => redis.set(key, "1", { px: ms }));
  }
}
