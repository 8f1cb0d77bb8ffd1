import { MUTEX } from "../kinds/mutex/types.js";
import type { Redis } from "@upstash/redis";
import { LeaseLostError } from "../errors.js";
import type { MutexAcquireInput, MutexAcquireResult, MutexGrant, MutexState } from "../kinds/mutex/types.js";
import type { CurrentHolder } from "../errors.js";
import type { LockStore } from "../store/types.js";
import { newOwnerToken, newRequestId } from "../tokens.js";
import { LOCK_DELAY_MAX_MS } from "../limits.js";
import { checkHolder, checkInt, checkToken } from "../validation.js";
import { type ClaimOnGrant, checkClaimOnGrant, claimOnGrant } from "../fence/claim.js";
import { holding } from "./holding.js";
import { LibraryLock, type LibraryLockOptions, leaseAsked } from "./LibraryLock.js";

export type MutexOptions = LibraryLockOptions;

export interface AcquireOptions {
  /** 100 .. 86_400_000, as in the HTTP contract. */
  ttlMs: number;
  /** How long to keep trying, ms (0 up to 2^31 - 1, LIBRARY_WAIT_MAX_MS); 0 tries once. */
  waitMs?: number;
  /** A token you hold, to re-enter. */
  token?: string;
  /** Who holds it, in words (1-256 printable characters): shown by inspect and to callers turned away (LockedError.current). */
  holder?: string;
  /** If this lease lapses (no release), nobody gets the lock for this long after (0 .. 60 000 ms). */
  lockDelayMs?: number;
  signal?: AbortSignal;
  /**
   * Claim on grant (holdfast/fence): these resources are claimed with the
   * grant's fence before acquire answers, so an older holder's fenced write
   * is refused from then on. A refused claim gives the grant back and throws.
   */
  claim?: ClaimOnGrant;
}

/** One try's outcome, as pollForGrant takes it; a busy one names the holder for LockedError. */
type Attempt = { done: true; value: MutexGrant } | { done: false; retryAfterMs: number; current: CurrentHolder | undefined };

/** An acquire's answer (a mutex's, an election's) as an attempt; a stale re-entry throws LeaseLostError. */
export function attemptOf(r: MutexAcquireResult): Attempt {
  if (r.status === "granted") return { done: true, value: r.grant };
  if (r.status === "lost") throw new LeaseLostError();
  return { done: false, retryAfterMs: r.retryAfterMs, current: r.current };
}

/**
 * A re-entrant mutex with fencing tokens over any store. As a library:
 * `new Mutex(redis, "job-1")` with an @upstash/redis client. Arguments are
 * checked with the HTTP contract's bounds (InvalidInputError naming the
 * field) before anything reaches the store.
 */
export class Mutex extends LibraryLock<typeof MUTEX> {
  /** Set once an acquire asked for a lock-delay: its releases go straight to the full release script. */
  private lockDelayAsked = false;

  constructor(redisOrStore: Redis | LockStore, name: string, options: MutexOptions = {}) {
    super(MUTEX, redisOrStore, name, options);
  }

  /** Acquires or re-enters; throws LockedError when busy past waitMs, LeaseLostError on a stale token. */
  async acquire(options: AcquireOptions): Promise<MutexGrant> {
    const { ttlMs, waitMs } = leaseAsked(options);
    const reenter = options.token !== undefined;
    const token = reenter ? checkToken(options.token) : newOwnerToken();
    const holder = options.holder === undefined ? undefined : checkHolder(options.holder);
    const lockDelayMs =
      options.lockDelayMs === undefined ? undefined : checkInt("invalid_lock_delay", "lockDelayMs", options.lockDelayMs, 0, LOCK_DELAY_MAX_MS);
    const claim = checkClaimOnGrant(options.claim);
    if (lockDelayMs) this.lockDelayAsked = true;
    const input: MutexAcquireInput = {
      token,
      mode: reenter ? "reenter" : "new",
      ttlMs,
      // Only a re-entry is remembered by request id; a new acquire's retry is recognised by its token.
      requestId: reenter ? newRequestId() : "",
      watch: false,
      holder,
      lockDelayMs,
    };
    // A re-entry, or a try-lock (waitMs 0, the usual call), tries once: no polling loop around it.
    const grant = await this.grantWithin(reenter ? 0 : waitMs, async () => attemptOf(await this.ops.acquire(this.ref, input)), options.signal);
    if (claim !== undefined) await claimOnGrant(claim, grant.fence, () => this.release(grant.token));
    return grant;
  }

  /** Drops one level of a re-entrant hold; the lock is free when `released` is true. */
  async release(token: string) {
    // No lock object waits behind a library's lease unless a Worker shares the database (the store then runs the full release).
    const r = await this.ops.release(this.ref, {
      token: checkToken(token),
      requestId: newRequestId(),
      expectUnwatched: !this.lockDelayAsked,
    });
    if (r.status === "lost") throw new LeaseLostError();
    return { released: r.released, count: r.count, fence: r.fence };
  }

  inspect(): Promise<MutexState> {
    return this.ops.inspect(this.ref);
  }

  /** Runs fn while holding the lock and releases it afterwards, even when fn throws. */
  async withLock<T>(options: AcquireOptions, fn: (grant: MutexGrant) => Promise<T>): Promise<T> {
    return holding(await this.acquire(options), (token) => this.release(token), fn);
  }
}
