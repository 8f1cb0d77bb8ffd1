import type { Redis } from "@upstash/redis";
import { type CurrentHolder, InvalidInputError, LeaseLostError, LockedError } from "../errors.js";
import type { KindKey, KindName, OpsOf } from "../store/kinds.js";
import { kindOps, type LockRef, type LockStore } from "../store/types.js";
import { checkName, checkNamespace, checkToken, checkTtl, checkWait } from "../validation.js";
import { pollForGrant } from "./pollForGrant.js";
import { storeOf } from "./storeOf.js";

/** The options every library lock takes besides its own. */
export interface LibraryLockOptions {
  /** Names live inside a namespace (^[A-Za-z0-9_-]{1,64}$); the library default is "default". */
  namespace?: string;
  /** Bound on each store call in ms (default 2000). */
  timeoutMs?: number;
}

/** What every lease kind's store has: a heartbeat that extends a holder's lease, or finds it lost. */
interface Heartbeating {
  heartbeat(
    ref: LockRef,
    input: { token: string; ttlMs?: number },
  ): Promise<{ status: "lost" } | { status: "ok"; expiresAt: number; ttlMs: number; fence: number }>;
}

/** One try that did not grant: when to look again, and who holds (for LockedError), when the kind says. */
type Busy = { done: false; retryAfterMs: number; current?: CurrentHolder };

/**
 * What the library's lock classes (Mutex, RwLock, Semaphore, FlowLimit,
 * Election) share, in the manner of redis-semaphore's base class: the lock's
 * name and store, the lease's heartbeat, and the wait (one try, or polling up
 * to waitMs) around each kind's own try. Each class keeps its own acquire,
 * release and answers; the store is asked for the kind at each call, so a
 * store without it fails there (NotSupportedError), not at construction.
 */
export abstract class LibraryLock<K extends KindKey<KindName, Heartbeating>> {
  protected readonly store: LockStore;
  protected readonly ref: LockRef;

  constructor(
    private readonly key: K,
    redisOrStore: Redis | LockStore,
    name: string,
    options: LibraryLockOptions,
  ) {
    this.ref = { ns: checkNamespace(options.namespace ?? "default"), name: checkName(name) };
    this.store = storeOf(redisOrStore, options.timeoutMs);
  }

  get name(): string {
    return this.ref.name;
  }

  /** The kind's operations on this lock's store. */
  protected get ops(): OpsOf<K> {
    return kindOps(this.store, this.key);
  }

  /** Extends the lease to ttlMs (default: its acquire's ttl) from the store's now. */
  async heartbeat(token: string, ttlMs?: number) {
    const key: KindKey<KindName, Heartbeating> = this.key;
    const r = await kindOps(this.store, key).heartbeat(this.ref, {
      token: checkToken(token),
      ttlMs: ttlMs === undefined ? undefined : checkTtl(ttlMs),
    });
    if (r.status === "lost") throw new LeaseLostError();
    return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
  }

  /**
   * The grant of `tryOnce`, tried once (waitMs 0) or again until waitMs runs
   * out (pollForGrant); still busy then, a LockedError with the kind's words
   * for it and the holder in the way, when the try named one.
   */
  protected async grantWithin<T, B extends Busy>(
    waitMs: number,
    tryOnce: () => Promise<{ done: true; value: T } | B>,
    signal?: AbortSignal,
    busyMessage?: (busy: B) => string,
  ): Promise<T> {
    const result = waitMs === 0 ? await tryOnce() : await pollForGrant(waitMs, tryOnce, signal);
    if (result.done) return result.value;
    const busy = result as B;
    throw new LockedError(busy.retryAfterMs, busyMessage?.(busy), busy.current);
  }
}

/** An acquire's options, checked: an object with a ttl (100 .. 86_400_000) and a wait (0 .. 2^31 - 1, default 0). */
export function leaseAsked(options: { ttlMs: number; waitMs?: number }): { ttlMs: number; waitMs: number } {
  if (options === null || typeof options !== "object") throw new InvalidInputError("invalid_ttl", "options with ttlMs are required");
  return { ttlMs: checkTtl(options.ttlMs), waitMs: checkWait(options.waitMs ?? 0) };
}
