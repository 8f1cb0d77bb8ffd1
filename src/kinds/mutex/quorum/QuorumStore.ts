import type { Redis } from "@upstash/redis";
import { InvalidInputError } from "../../../errors.js";
import { redisMutex } from "../redisMutex.js";
import type { MutexOps } from "../types.js";
import { ScriptRunner } from "../../../store/redis/ScriptRunner.js";
import type { LockStore } from "../../../store/types.js";
import { gather, noMajority } from "./majority.js";
import { quorumMutex } from "./quorumMutex.js";

export interface QuorumStoreOptions {
  /**
   * Bound on each database's answer in ms (default 2000). An acquire makes at
   * most three rounds (grant, fence, and giving back a grant that fell short),
   * so it answers within three bounds; the other operations within one or two.
   */
  timeoutMs?: number;
}

/**
 * Redlock: the mutex over N independent Redis databases (N odd, at least 3),
 * for when one Redis is not trusted to stay up. A lock stands on a majority;
 * with one of three databases down locks keep working, with two down calls
 * fail with StoreUnavailableError within the bound.
 *
 * Only the mutex. The other kinds are absent, so they throw NotSupportedError (HTTP 501):
 * - semaphore: a holder counted on a majority does not bound the holders. With
 *   3 databases and a limit of 2, three holders can each hold a different
 *   pair of databases, and every database still counts only two.
 * - idempotency keys: they store a result that must never be lost, which a
 *   majority of lock records does not give (that needs replicated writes and
 *   read repair); keep them on one durable store.
 * - read-write lock: a majority would do for it as for the mutex (any writer's
 *   majority shares a database with any reader's), but it is not built yet.
 */
export class QuorumStore implements LockStore {
  /** Behaves as the Redis store towards the lock objects (state outside them). */
  readonly kind = "redis" as const;
  readonly offers = "a quorum of Redis databases offers the mutex only";
  /** The only kind: the others are absent, so they answer NotSupportedError (store/types.ts kindOps). */
  readonly mutex: MutexOps;
  readonly size: number;
  private readonly runners: ScriptRunner[];

  constructor(databases: Redis[], options: QuorumStoreOptions = {}) {
    if (databases.length < 3 || databases.length % 2 === 0) {
      throw new InvalidInputError("invalid_quorum", `a quorum needs an odd number of at least 3 Redis databases, got ${databases.length}`);
    }
    this.size = databases.length;
    this.runners = databases.map((redis) => new ScriptRunner(redis, options.timeoutMs));
    this.mutex = quorumMutex(this.runners.map((scripts) => ({ mutex: redisMutex(scripts), scripts })));
  }

  /** Resolves when a majority answers. */
  async ping(): Promise<void> {
    const majority = Math.floor(this.size / 2) + 1;
    const g = await gather(
      this.size,
      (i) => this.runners[i].ping(),
      (answers) => answers.filter((a) => a.ok).length >= majority,
    );
    if (g.answers.filter((a) => a?.ok).length < majority) throw noMajority("ping", g.answers, majority);
  }
}
