/**
 * The store interface: one method per script. RedisStore runs lua/*.lua
 * through Upstash; DurableStore reproduces the same semantics in a Durable
 * Object. Both pass test/conformance. Outcomes a caller must branch on are
 * results, not exceptions; a store that does not answer throws
 * StoreUnavailableError.
 */

/** A lock's identity: names live inside the namespace of the API key. */
export interface LockRef {
  ns: string;
  name: string;
}

export interface MutexGrant {
  name: string;
  token: string;
  fence: number;
  ttlMs: number;
  expiresAt: number;
  count: number;
}

export interface MutexAcquireInput {
  /** The new owner token, or the token held when re-entering. */
  token: string;
  reenter: boolean;
  ttlMs: number;
  /** Same id on a retry of the same request: the retry gets the first answer. */
  requestId: string;
  /** Mark the lease as watched by its room (waiters or onExpire). */
  watch: boolean;
}

export type MutexAcquireResult =
  | { status: "granted"; grant: MutexGrant }
  | { status: "busy"; retryAfterMs: number; expiresAt: number }
  | { status: "lost" };

export type MutexHeartbeatResult =
  | { status: "ok"; expiresAt: number; ttlMs: number; fence: number; watched: boolean }
  | { status: "lost" };

export type MutexReleaseResult =
  | { status: "ok"; released: boolean; count: number; fence: number; watched: boolean }
  | { status: "lost" };

export interface MutexState {
  held: boolean;
  /** The current holder's fence, or the last issued one when free (null if none is remembered). */
  fence: number | null;
  count: number;
  /** Remaining lease time, 0 when free. */
  ttlMs: number;
  expiresAt: number | null;
}

export interface MutexStore {
  mutexAcquire(ref: LockRef, input: MutexAcquireInput): Promise<MutexAcquireResult>;
  mutexHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }): Promise<MutexHeartbeatResult>;
  mutexRelease(ref: LockRef, input: { token: string; requestId: string }): Promise<MutexReleaseResult>;
  mutexInspect(ref: LockRef): Promise<MutexState>;
}

export interface LockStore extends MutexStore {
  readonly kind: "redis" | "durable";
  /** Resolves when the store answers; throws StoreUnavailableError otherwise. */
  ping(): Promise<void>;
}
