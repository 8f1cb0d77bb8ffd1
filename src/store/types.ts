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

export interface IdempotencyBeginInput {
  /** The new owner token, used only if this begin starts the work. */
  token: string;
  ttlMs: number;
  /** How long the record (fingerprint, then response) is kept. */
  retainMs: number;
  fingerprint?: string;
  /** Same id on a retry of the same request: the retry gets the first answer. */
  requestId: string;
}

export type IdempotencyBeginResult =
  | { status: "started"; token: string; fence: number; ttlMs: number; expiresAt: number }
  | { status: "completed"; response: unknown; completedAt: number; fence: number }
  | { status: "in_progress"; retryAfterMs: number; expiresAt: number }
  | { status: "mismatch" };

export type IdempotencyHeartbeatResult =
  | { status: "ok"; expiresAt: number; ttlMs: number; fence: number }
  | { status: "lost" };

export type IdempotencyCompleteResult = { status: "ok"; completedAt: number; fence: number } | { status: "lost" };

export type IdempotencyFailResult = { status: "ok"; fence: number } | { status: "lost" };

/** What GET shows: never the token. A start whose deadline passed is absent. */
export type IdempotencyState =
  | { state: "absent" }
  | { state: "started"; fence: number; expiresAt: number }
  | { state: "completed"; fence: number; completedAt: number; response: unknown };

export interface IdempotencyStore {
  idempotencyBegin(ref: LockRef, input: IdempotencyBeginInput): Promise<IdempotencyBeginResult>;
  idempotencyHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }): Promise<IdempotencyHeartbeatResult>;
  /** `responseJson` is the response's JSON text, already size-checked. */
  idempotencyComplete(
    ref: LockRef,
    input: { token: string; responseJson: string; requestId: string },
  ): Promise<IdempotencyCompleteResult>;
  idempotencyFail(ref: LockRef, input: { token: string; requestId: string }): Promise<IdempotencyFailResult>;
  idempotencyInspect(ref: LockRef): Promise<IdempotencyState>;
}

export interface LockStore extends MutexStore, IdempotencyStore {
  readonly kind: "redis" | "durable";
  /** Resolves when the store answers; throws StoreUnavailableError otherwise. */
  ping(): Promise<void>;
}
