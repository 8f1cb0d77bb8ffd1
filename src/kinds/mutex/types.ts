import { type KindKey, type KindName, kindKey } from "../../store/kinds.js";
import type { MutexWait } from "./wait.js";
import type { CurrentHolder } from "../../errors.js";
import type { WithdrawReason } from "../../store/types.js";
import type { LockRef } from "../../store/types.js";
import type { WatchedLeaseId, WatchState } from "../../store/types.js";
import type { AnsweredWrite } from "../../store/types.js";

/** What both stores do for the mutex; test/conformance holds them to the same behaviour. */

/**
 * Only from one database of a quorum (store/quorum): the fence the quorum
 * agreed for the lease (lua/mutex/raise_fence.lua), which tells the lease's fence apart
 * from one the database issued on its own for a grant too late to count.
 */
interface AgreedFence {
  quorumFence?: number;
}

export interface MutexGrant extends AgreedFence {
  name: string;
  token: string;
  fence: number;
  ttlMs: number;
  expiresAt: number;
  count: number;
}

/** Its request id: the same on a retry of the same re-entry, which then gets the first answer. */
export interface MutexAcquireInput extends AnsweredWrite {
  /** The new owner token, or the token held when re-entering. */
  token: string;
  /** "new": a try-lock; "reenter": the holder again; "queue": the lock object for its head waiter. */
  mode: "new" | "reenter" | "queue";
  ttlMs: number;
  /** The lock object must hear of this lease's release (it watches it for onExpire). */
  watch: boolean;
  /** LineOrder mode: other waiters queue behind this one (a handoff keeps try-locks out for them). */
  more?: boolean;
  /** LineOrder mode: a grant now must be picked up (the waiter waited; see PICKUP_MS). */
  markPickup?: boolean;
  /** Who holds it, in words (a holder label; stored with the lease, shown by inspect and to busy callers). */
  holder?: string;
  /** Nobody is granted the lock for this long (ms) after this lease lapses (ends without a release). */
  lockDelayMs?: number;
  /** Append a new grant to the lock's history of changes (an election's, src/kinds/election/). */
  history?: boolean;
}

export type MutexAcquireResult =
  | { status: "granted"; grant: MutexGrant }
  /** `queued`: the lock is free but a waiter is first (no barging). */
  /** `delayedUntil`: free, but a lapsed lease's lock-delay holds everyone off until then. */
  | { status: "busy"; retryAfterMs: number; queued: boolean; current?: CurrentHolder; delayedUntil?: number }
  | { status: "lost" };

export type MutexHeartbeatResult = ({ status: "ok"; expiresAt: number; ttlMs: number; fence: number } & AgreedFence) | { status: "lost" };

export type MutexReleaseResult =
  | (AgreedFence & {
      status: "ok";
      released: boolean;
      count: number;
      fence: number;
      /** The lock object must hear of this release (waiters or an onExpire watch). */
      watched: boolean;
      /** The release handed the lock to the lock object's registered waiter. */
      handedTo?: MutexGrant;
      /** A force release: the freed lease's label (null when it had none). */
      holder?: string | null;
    })
  | { status: "lost" };

export interface MutexReleaseInput extends AnsweredWrite {
  /** The holder's token ("" with force). */
  token: string;
  /**
   * An operator's force release: whoever holds it, every re-entered level at
   * once; with a fence, only the lease of that fence (lost otherwise).
   */
  force?: { fence?: number };
  /**
   * The caller expects no lock object waiting behind the lease and no lock-delay on it (the library):
   * the Redis store then tries the release that passes two keys instead of six
   * (lua/mutex/release_unwatched.lua), and runs the full one only for a lease that needs it.
   */
  expectUnwatched?: boolean;
}

/** Taking a queued waiter out of line (see lua/mutex/withdraw.lua). */
export type MutexWithdrawResult = { status: "unregistered" | "none" } | { status: "revoked"; fence: number };

export interface MutexState extends AgreedFence {
  held: boolean;
  /** The current holder's fence, or the last issued one when free (null if none is remembered). */
  fence: number | null;
  count: number;
  /** Remaining lease time, 0 when free. */
  ttlMs: number;
  expiresAt: number | null;
  /** The holder's label (null when free or none was given). */
  holder: string | null;
  /** Free, but a lapsed lease's lock-delay holds it until then (null otherwise). */
  delayedUntil: number | null;
}

export interface MutexOps {
  acquire(ref: LockRef, input: MutexAcquireInput): Promise<MutexAcquireResult>;
  heartbeat(ref: LockRef, input: { token: string; ttlMs?: number }): Promise<MutexHeartbeatResult>;
  release(ref: LockRef, input: MutexReleaseInput): Promise<MutexReleaseResult>;
  withdraw(ref: LockRef, input: { token: string; reason: WithdrawReason }): Promise<MutexWithdrawResult>;
  inspect(ref: LockRef): Promise<MutexState>;
  /** The lease of this fence, for its onExpire watch. */
  watch(ref: LockRef, lease: WatchedLeaseId): Promise<WatchState>;
}

/** Redis store: a release landed; it may have handed the lock to the lock object's registered waiter. */
export interface MutexWriteNote {
  ref: LockRef;
  fence: number;
  handedTo?: MutexGrant;
}

/** The mutex's name, carrying the types of its store operations, its wait request and its write notes. */
export const MUTEX = kindKey<MutexOps, MutexWait, MutexWriteNote>()("mutex");

/**
 * A kind whose store rules are the mutex's (the mutex; an election, src/kinds/election/): its store
 * operations include the mutex's, its wait is the mutex's under its own name, its notes the mutex's.
 * The mutex's lock object part and line policy serve any such kind.
 */
export type MutexRulesKey = KindKey<KindName, MutexOps, Omit<MutexWait, "kind"> & { kind: string }, MutexWriteNote>;
