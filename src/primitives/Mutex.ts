import type { Redis } from "@upstash/redis";
import { LeaseLostError, LockedError } from "../errors";
import { newOwnerToken, newRequestId } from "../tokens";
import type { LockRef, LockStore, MutexGrant, MutexState } from "../store/types";
import { pollForGrant } from "./pollForGrant";
import { storeOf } from "./storeOf";

export interface MutexOptions {
  /** Names live inside a namespace; the library default is "default". */
  namespace?: string;
  /** Bound on each store call in ms (default 2000). */
  timeoutMs?: number;
}

export interface AcquireOptions {
  ttlMs: number;
  /** How long to keep trying; 0 tries once. */
  waitMs?: number;
  /** A token you hold, to re-enter. */
  token?: string;
  /** Mark the lease as watched by its room (server use). */
  watch?: boolean;
  signal?: AbortSignal;
}

/**
 * A re-entrant mutex with fencing tokens over any store. As a library:
 * `new Mutex(redis, "job-1")` with an @upstash/redis client.
 */
export class Mutex {
  private readonly store: LockStore;
  private readonly ref: LockRef;

  constructor(redisOrStore: Redis | LockStore, name: string, options: MutexOptions = {}) {
    this.store = storeOf(redisOrStore, options.timeoutMs);
    this.ref = { ns: options.namespace ?? "default", name };
  }

  get name(): string {
    return this.ref.name;
  }

  /** Acquires or re-enters; throws LockedError when busy past waitMs, LeaseLostError on a stale token. */
  async acquire(options: AcquireOptions): Promise<MutexGrant> {
    const reenter = options.token !== undefined;
    const token = options.token ?? newOwnerToken();
    const tryOnce = async () => {
      const r = await this.store.mutexAcquire(this.ref, {
        token,
        reenter,
        ttlMs: options.ttlMs,
        requestId: newRequestId(),
        watch: options.watch ?? false,
      });
      if (r.status === "lost") throw new LeaseLostError();
      return r.status === "granted"
        ? { done: true as const, value: r.grant }
        : { done: false as const, retryAfterMs: r.retryAfterMs };
    };
    const result = reenter ? await tryOnce() : await pollForGrant(options.waitMs ?? 0, tryOnce, options.signal);
    if (!result.done) throw new LockedError(result.retryAfterMs);
    return result.value;
  }

  /** Extends the lease to ttlMs (default: the acquire's ttl) from the store's now. */
  async heartbeat(token: string, ttlMs?: number) {
    const r = await this.store.mutexHeartbeat(this.ref, { token, ttlMs });
    if (r.status === "lost") throw new LeaseLostError();
    return r;
  }

  /** Drops one level of a re-entrant hold; the lock is free when `released` is true. */
  async release(token: string) {
    const r = await this.store.mutexRelease(this.ref, { token, requestId: newRequestId() });
    if (r.status === "lost") throw new LeaseLostError();
    return r;
  }

  inspect(): Promise<MutexState> {
    return this.store.mutexInspect(this.ref);
  }

  /** Runs fn while holding the lock and releases it afterwards, even when fn throws. */
  async withLock<T>(options: AcquireOptions, fn: (grant: MutexGrant) => Promise<T>): Promise<T> {
    const grant = await this.acquire(options);
    try {
      return await fn(grant);
    } finally {
      await this.release(grant.token).catch((err) => {
        if (!(err instanceof LeaseLostError)) throw err;
      });
    }
  }
}
