import { MUTEX } from "../kinds/mutex/types.js";
import { kindOps } from "../store/types.js";
import type { Redis } from "@upstash/redis";
import { LeaseLostError, LockedError } from "../errors.js";
import type { MutexAcquireInput, MutexAcquireResult, MutexGrant, MutexState } from "../kinds/mutex/types.js";
import type { CurrentHolder } from "../errors.js";
import type { LockRef } from "../store/types.js";
import type { LockStore } from "../store/types.js";
import { newOwnerToken, newRequestId } from "../tokens.js";
import { LOCK_DELAY_MAX_MS } from "../limits.js";
import { checkHolder, checkInt, checkName, checkNamespace, checkToken, checkTtl, checkWait } from "../validation.js";
import { type ClaimOnGrant, checkClaimOnGrant, claimOnGrant } from "../fence/claim.js";
import { pollForGrant } from "./pollForGrant.js";
import { storeOf } from "./storeOf.js";
import { holding } from "./holding.js";

export interface MutexOptions {
  /** Names live inside a namespace (^[A-Za-z0-9_-]{1,64}$); the library default is "default". */
  namespace?: string;
  /** Bound on each store call in ms (default 2000). */
  timeoutMs?: number;
}

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

/** An acquire's answer as an attempt; a stale re-entry throws LeaseLostError. */
function attemptOf(r: MutexAcquireResult): Attempt {
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
export class Mutex {
  private readonly store: LockStore;
  private readonly ref: LockRef;
  /** Set once an acquire asked for a lock-delay: its releases go straight to the full release script. */
  private lockDelayAsked = false;

  constructor(redisOrStore: Redis | LockStore, name: string, options: MutexOptions = {}) {
    this.ref = { ns: checkNamespace(options.namespace ?? "default"), name: checkName(name) };
    this.store = storeOf(redisOrStore, options.timeoutMs);
  }

  get name(): string {
    return this.ref.name;
  }

  /** Acquires or re-enters; throws LockedError when busy past waitMs, LeaseLostError on a stale token. */
  async acquire(options: AcquireOptions): Promise<MutexGrant> {
    const ttlMs = checkTtl(options.ttlMs);
    const waitMs = checkWait(options.waitMs ?? 0);
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
    const ops = kindOps(this.store, MUTEX);
    // A re-entry, or a try-lock (waitMs 0, the usual call), tries once: no polling loop around it.
    const result =
      reenter || waitMs === 0
        ? attemptOf(await ops.acquire(this.ref, input))
        : await pollForGrant(waitMs, async () => attemptOf(await ops.acquire(this.ref, input)), options.signal);
    if (!result.done) throw new LockedError(result.retryAfterMs, undefined, result.current);
    const grant = result.value;
    if (claim !== undefined) await claimOnGrant(claim, grant.fence, () => this.release(grant.token));
    return grant;
  }

  /** Extends the lease to ttlMs (default: the acquire's ttl) from the store's now. */
  async heartbeat(token: string, ttlMs?: number) {
    const r = await kindOps(this.store, MUTEX).heartbeat(this.ref, {
      token: checkToken(token),
      ttlMs: ttlMs === undefined ? undefined : checkTtl(ttlMs),
    });
    if (r.status === "lost") throw new LeaseLostError();
    return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
  }

  /** Drops one level of a re-entrant hold; the lock is free when `released` is true. */
  async release(token: string) {
    // No lock object waits behind a library's lease unless a Worker shares the database (the store then runs the full release).
    const r = await kindOps(this.store, MUTEX).release(this.ref, {
      token: checkToken(token),
      requestId: newRequestId(),
      expectUnwatched: !this.lockDelayAsked,
    });
    if (r.status === "lost") throw new LeaseLostError();
    return { released: r.released, count: r.count, fence: r.fence };
  }

  inspect(): Promise<MutexState> {
    return kindOps(this.store, MUTEX).inspect(this.ref);
  }

  /** Runs fn while holding the lock and releases it afterwards, even when fn throws. */
  async withLock<T>(options: AcquireOptions, fn: (grant: MutexGrant) => Promise<T>): Promise<T> {
    return holding(await this.acquire(options), (token) => this.release(token), fn);
  }
}
