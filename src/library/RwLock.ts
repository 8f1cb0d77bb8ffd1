import { RWLOCK } from "../kinds/rwlock/types.js";
import type { Redis } from "@upstash/redis";
import { ConflictError, InvalidInputError, LeaseLostError } from "../errors.js";
import type { RwGrant, RwMode, RwState } from "../kinds/rwlock/types.js";
import type { LockStore } from "../store/types.js";
import { newOwnerToken, newRequestId } from "../tokens.js";
import { checkToken } from "../validation.js";
import { holding } from "./holding.js";
import { LibraryLock, type LibraryLockOptions, leaseAsked } from "./LibraryLock.js";

export type RwLockOptions = LibraryLockOptions;

export interface RwLockAcquireOptions {
  /** 100 .. 86_400_000, as in the HTTP contract. */
  ttlMs: number;
  /** How long to keep trying, ms (0 up to 2^31 - 1, LIBRARY_WAIT_MAX_MS); 0 tries once. Ignored with `token`. */
  waitMs?: number;
  /**
   * A token you hold, to re-enter (tried once, never waits): a reader may
   * re-enter its read, a writer its write, and a writer may also take a read
   * (a downgrade once it releases the write). A read token asking for the
   * write lock is refused with a ConflictError `upgrade_not_supported`.
   */
  token?: string;
  signal?: AbortSignal;
}

function checkReleaseMode(value: unknown): RwMode | "any" {
  if (value === undefined) return "any";
  if (value !== "read" && value !== "write") {
    throw new InvalidInputError("invalid_mode", `mode must be "read" or "write" (or left out), got ${JSON.stringify(value)?.slice(0, 80)}`);
  }
  return value;
}

/**
 * A read-write lock over any store: many readers at once, or one writer.
 * Every holder has its own token and lease, so a crashed reader blocks
 * writers only until its own TTL. As a library:
 * `new RwLock(redis, "catalog")` with an @upstash/redis client. Arguments are
 * checked with the HTTP contract's bounds (InvalidInputError naming the
 * field) before anything reaches the store.
 *
 * Errors: LockedError when busy past waitMs, LeaseLostError for a token that
 * holds nothing (in that mode), ConflictError (a HoldfastError) with code
 * `upgrade_not_supported` when a read token asks for the write lock: two
 * readers upgrading would wait for each other forever, so release the read
 * and take the write instead.
 *
 * Waiting here is polling (with jittered backoff): unlike the service's
 * line, a polling writer can be overtaken by readers that keep arriving.
 */
export class RwLock extends LibraryLock<typeof RWLOCK> {
  constructor(redisOrStore: Redis | LockStore, name: string, options: RwLockOptions = {}) {
    super(RWLOCK, redisOrStore, name, options);
  }

  /** Takes (or re-enters, or as a writer downgrades to) a read lock. */
  readLock(options: RwLockAcquireOptions): Promise<RwGrant> {
    return this.acquire("read", options);
  }

  /** Takes or re-enters the write lock. */
  writeLock(options: RwLockAcquireOptions): Promise<RwGrant> {
    return this.acquire("write", options);
  }

  private async acquire(mode: RwMode, options: RwLockAcquireOptions): Promise<RwGrant> {
    const { ttlMs, waitMs } = leaseAsked(options);
    const reenter = options.token !== undefined;
    const token = reenter ? checkToken(options.token) : newOwnerToken();
    const tryOnce = async () => {
      // A new request id per attempt: a repeat of one attempt (the client's own retry) gets its first answer.
      const r = await this.ops.acquire(this.ref, { mode, token, reenter, ttlMs, watch: false, requestId: newRequestId() });
      switch (r.status) {
        case "granted":
          return { done: true as const, value: r.grant };
        case "busy":
          return { done: false as const, retryAfterMs: r.retryAfterMs };
        case "lost":
          throw new LeaseLostError(reenter ? "this token holds no lock to re-enter" : undefined);
        case "upgrade":
          throw new ConflictError(
            "upgrade_not_supported",
            "a read lock cannot be upgraded to a write lock (two readers upgrading would wait for each other forever): release the read and take the write",
          );
      }
    };
    // A re-entry is tried once, whatever waitMs says.
    return this.grantWithin(reenter ? 0 : waitMs, tryOnce, options.signal);
  }

  /**
   * Drops one hold in `mode` (default: the write hold if the token has one,
   * else a read hold). `released` is true when the token holds nothing any
   * more; `count` is the holds left in the released mode. A writer that also
   * reads keeps its read when it releases the write (a downgrade).
   */
  async release(token: string, mode?: RwMode): Promise<{ released: boolean; mode: RwMode; count: number }> {
    const checkedToken = checkToken(token);
    const checkedMode = checkReleaseMode(mode);
    const r = await this.ops.release(this.ref, { token: checkedToken, mode: checkedMode, requestId: newRequestId() });
    if (r.status === "lost") throw new LeaseLostError(checkedMode === "any" ? undefined : `this token holds no ${checkedMode} lock`);
    return { released: r.released, mode: r.mode, count: r.count };
  }

  inspect(): Promise<RwState> {
    return this.ops.inspect(this.ref);
  }

  /** Runs fn holding a read lock and releases that hold afterwards, even when fn throws. */
  withReadLock<T>(options: RwLockAcquireOptions, fn: (grant: RwGrant) => Promise<T>): Promise<T> {
    return this.withHold("read", options, fn);
  }

  /** Runs fn holding the write lock and releases that hold afterwards, even when fn throws. */
  withWriteLock<T>(options: RwLockAcquireOptions, fn: (grant: RwGrant) => Promise<T>): Promise<T> {
    return this.withHold("write", options, fn);
  }

  private async withHold<T>(mode: RwMode, options: RwLockAcquireOptions, fn: (grant: RwGrant) => Promise<T>): Promise<T> {
    return holding(await this.acquire(mode, options), (token) => this.release(token, mode), fn);
  }
}
