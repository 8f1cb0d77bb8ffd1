import { SEMAPHORE } from "../kinds/semaphore/types.js";
import type { Redis } from "@upstash/redis";
import { ConflictError, InvalidInputError, LeaseLostError } from "../errors.js";
import type { SemaphoreGrant, SemaphoreState } from "../kinds/semaphore/types.js";
import { LIMIT_MAX } from "../limits.js";
import type { LockStore } from "../store/types.js";
import { newOwnerToken, newRequestId } from "../tokens.js";
import { checkInt, checkToken } from "../validation.js";
import { holding } from "./holding.js";
import { LibraryLock, type LibraryLockOptions, leaseAsked } from "./LibraryLock.js";

export interface SemaphoreOptions extends LibraryLockOptions {
  /** How many permits there are (1 .. 10_000). Every holder must use the same limit. */
  limit: number;
}

export interface SemaphoreAcquireOptions {
  /** 100 .. 86_400_000, as in the HTTP contract. */
  ttlMs: number;
  /** How long to keep trying, ms (0 up to 2^31 - 1, LIBRARY_WAIT_MAX_MS); 0 tries once. */
  waitMs?: number;
  /** How many permits to take as one holder (1 .. limit, default 1). */
  permits?: number;
  signal?: AbortSignal;
}

const checkLimit = (value: unknown) => checkInt("invalid_limit", "limit", value, 1, LIMIT_MAX);
const checkPermits = (value: unknown, limit: number) => checkInt("invalid_permits", "permits", value, 1, limit);

/**
 * A counting semaphore over any store: up to `limit` permits, each holder
 * with its own token and lease, so a crashed holder's permits come back at
 * its own TTL. As a library: `new Semaphore(redis, "exports", { limit: 4 })`
 * with an @upstash/redis client. Arguments are checked with the HTTP
 * contract's bounds (InvalidInputError naming the field) before anything
 * reaches the store.
 *
 * Errors: LockedError when the permits are not free within waitMs,
 * LeaseLostError for a token that holds nothing, ConflictError (a
 * HoldfastError) with code `limit_mismatch` when the current holders use
 * another limit (waiting would not help).
 */
export class Semaphore extends LibraryLock<typeof SEMAPHORE> {
  readonly limit: number;

  constructor(redisOrStore: Redis | LockStore, name: string, options: SemaphoreOptions) {
    if (options === null || typeof options !== "object") throw new InvalidInputError("invalid_limit", "options with limit are required");
    super(SEMAPHORE, redisOrStore, name, options);
    this.limit = checkLimit(options.limit);
  }

  /** Takes `permits` (default 1) as one new holder. */
  async acquire(options: SemaphoreAcquireOptions): Promise<SemaphoreGrant> {
    const { ttlMs, waitMs } = leaseAsked(options);
    const permits = checkPermits(options.permits ?? 1, this.limit);
    // One token for every attempt of this acquire: a repeated attempt whose first
    // answer was lost is recognised by the store as this acquire's own grant.
    const token = newOwnerToken();
    const limit = this.limit;
    return this.grantWithin(
      waitMs,
      async () => {
        const r = await this.ops.acquire(this.ref, { token, limit, permits, ttlMs, watch: false });
        switch (r.status) {
          case "granted":
            return { done: true as const, value: r.grant };
          case "busy":
            return { done: false as const, retryAfterMs: r.retryAfterMs };
          case "limit_mismatch":
            throw new ConflictError(
              "limit_mismatch",
              `the semaphore's holders use limit ${r.limit}; every acquire must ask for the same limit while anyone holds (this one asked for ${limit})`,
            );
        }
      },
      options.signal,
      () => "the permits are taken",
    );
  }

  /** Gives back all of the holder's permits; `available` is what is free after. */
  async release(token: string): Promise<{ released: true; permits: number; available: number }> {
    const r = await this.ops.release(this.ref, { token: checkToken(token), requestId: newRequestId() });
    if (r.status === "lost") throw new LeaseLostError();
    return { released: true, permits: r.permits, available: r.available };
  }

  inspect(): Promise<SemaphoreState> {
    return this.ops.inspect(this.ref);
  }

  /** Runs fn holding the permits and gives them back afterwards, even when fn throws. */
  async withPermits<T>(options: SemaphoreAcquireOptions, fn: (grant: SemaphoreGrant) => Promise<T>): Promise<T> {
    return holding(await this.acquire(options), (token) => this.release(token), fn);
  }
}
