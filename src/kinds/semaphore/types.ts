import type { WithdrawReason } from "../../store/WithdrawReason.js";
import type { LockRef } from "../../store/LockRef.js";
import type { WatchedLeaseId, WatchState } from "../../store/WatchState.js";
import type { Admitted, HolderHeartbeatResult, HolderWithdrawResult, QueuedHolder } from "../holders/types.js";

/** What both stores do for the counting semaphore; its conformance cases hold them to the same behaviour. */

export interface SemaphoreGrant {
  name: string;
  token: string;
  permits: number;
  limit: number;
  fence: number;
  ttlMs: number;
  expiresAt: number;
  /** Permits left after this grant. */
  available: number;
}

export interface SemaphoreAcquireInput {
  token: string;
  limit: number;
  permits: number;
  ttlMs: number;
  watch: boolean;
}

export type SemaphoreAcquireResult =
  | { status: "granted"; grant: SemaphoreGrant }
  | { status: "busy"; retryAfterMs: number; queued: boolean }
  /** Holders exist with another limit. */
  | { status: "limit_mismatch"; limit: number };

export interface SemaphoreQueuedHolder extends QueuedHolder {
  limit: number;
  permits: number;
}

export type SemaphoreReleaseResult = { status: "ok"; permits: number; available: number; watched: boolean; waiters: boolean } | { status: "lost" };

export interface SemaphoreState {
  /** The holders' limit; null when nobody holds (the next acquire sets it). */
  limit: number | null;
  used: number;
  holders: number;
}

export interface SemaphoreOps {
  acquire(ref: LockRef, input: SemaphoreAcquireInput): Promise<SemaphoreAcquireResult>;
  admit(ref: LockRef, waiters: SemaphoreQueuedHolder[], more: boolean): Promise<Admitted<SemaphoreGrant>>;
  heartbeat(ref: LockRef, input: { token: string; ttlMs?: number }): Promise<HolderHeartbeatResult>;
  release(ref: LockRef, input: { token: string; requestId: string }): Promise<SemaphoreReleaseResult>;
  withdraw(ref: LockRef, input: { token: string; reason: WithdrawReason }): Promise<HolderWithdrawResult>;
  inspect(ref: LockRef): Promise<SemaphoreState>;
  watch(ref: LockRef, lease: WatchedLeaseId): Promise<WatchState>;
  /** The lock object's line is empty: drop a gate a lost line left behind. */
  ungate(ref: LockRef): Promise<void>;
}
