import type { CurrentHolder } from "../../errors.js";
import type { WithdrawReason } from "../../store/types.js";
import type { LockRef } from "../../store/types.js";
import type { WatchedLeaseId, WatchState } from "../../store/types.js";
import type { AnsweredWrite } from "../../store/types.js";

/**
 * What the lock kinds with many holders (the read-write lock and the
 * semaphore) share: every holder has its own token and its own lease, so a
 * holder that crashes blocks the others only until its own TTL. The lock
 * object's line is admitted in batches (all readers up to the next writer,
 * or every waiter whose permits fit), and while anyone waits a "gate" in the
 * store keeps try-locks out (no barging).
 */

export type HolderHeartbeatResult = { status: "ok"; expiresAt: number; ttlMs: number; fence: number } | { status: "lost" };

/** Taking a queued waiter out of line: the gate was its, its grant was taken back (see WithdrawReason), or nothing of it was left. */
export type HolderWithdrawResult = { status: "unregistered" | "none" } | { status: "revoked"; fence: number };

/** An operator's force release of a many-holder lock: what it freed, or lost when no holder matched. */
export type HolderForceResult =
  | {
      status: "ok";
      /** How many holders were freed. */
      released: number;
      /** The highest fence among them. */
      fence: number;
      /** The label of the first freed holder to end, null when none had one. */
      holder: string | null;
      /** The freed holders that were watched for onExpire (their watches end). */
      endedTokens: string[];
      /** The lock object has a line that must hear of it. */
      waiters: boolean;
    }
  | { status: "lost" };

export interface HolderForceInput extends AnsweredWrite {
  /** Free only the holders with this label; every holder without it. */
  holder?: string;
}

/** A holder's lease as an acquire asks for it. */
export interface HolderLeaseInput {
  token: string;
  ttlMs: number;
  /** Watched for onExpire. */
  watch: boolean;
  /** Its holder label, kept with the lease it gets. */
  holder?: string;
}

/** A try turned away: when to look again; `queued`: it could be granted but waiters are first (no barging); `current`: the first holder in the way to end. */
export type HolderBusy = { status: "busy"; retryAfterMs: number; queued: boolean; current?: CurrentHolder };

/** A waiter as the lock object passes it to a store step. */
export interface QueuedHolder extends HolderLeaseInput {
  /** A grant must be picked up (the waiter waited; see PICKUP_MS). */
  markPickup: boolean;
}

/** A waiter's request as the lock object's line keeps it: the store step's waiter, but for its token and pickup mark. */
export type LineRequest<Q extends QueuedHolder> = Omit<Q, "token" | "markPickup">;

/** One store step for the line: who was granted (in order), who was refused, and when to look again. */
export interface Admitted<Grant> {
  granted: Grant[];
  /** Waiters that can never be granted as asked (a semaphore limit that differs from the holders'). */
  refused: Array<{ token: string; code: string; message: string }>;
  /** Set when a waiter is left in line: the earliest time a holder's lease ends. */
  retryAfterMs?: number;
}

/** The operations every many-holder kind has, besides its own acquire/admit/release/inspect. */
/** The operations every many-holder kind has, the same way (its Ops extend these). */
export interface HolderOps {
  heartbeat(ref: LockRef, input: { token: string; ttlMs?: number }): Promise<HolderHeartbeatResult>;
  withdraw(ref: LockRef, input: { token: string; reason: WithdrawReason }): Promise<HolderWithdrawResult>;
  /** The lease of this holder (by its token), for its onExpire watch. */
  watch(ref: LockRef, lease: WatchedLeaseId): Promise<WatchState>;
  /** The object's line is empty: drop a gate a lost line left behind. */
  ungate(ref: LockRef): Promise<void>;
  /** An operator frees holders whatever their tokens (every one, or those with a label). */
  forceRelease(ref: LockRef, input: HolderForceInput): Promise<HolderForceResult>;
}

/** A many-holder kind's operations besides the shared ones (HolderOps): what its own scripts and rules do. */
export type OwnOps<Ops> = Omit<Ops, keyof HolderOps>;

/** Redis store: a holder released; the line may move, and its watch ends if it released for good. */
export interface HolderWriteNote {
  ref: LockRef;
  token: string;
  endedWatch: boolean;
  /** A force release: every freed holder whose watch ends. */
  endedTokens?: string[];
}
