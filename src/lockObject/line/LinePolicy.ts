import type { CurrentHolder } from "../../errors.js";
import type { LockRef } from "../../store/types.js";
import type { LockStore } from "../../store/types.js";
import type { WithdrawReason } from "../../store/types.js";

/** A waiter as the lock kind sees it: its pre-made owner token and its request. */
export interface QueuedWaiter<Req> {
  token: string;
  req: Req;
  /** It found the line empty and has not been tried yet: a grant now needs no pickup. */
  firstTry: boolean;
}

/** What one store step for the queue decided. */
export interface Admission<Grant> {
  /** Waiters granted now, in order (a read-write lock may grant a batch of readers). */
  granted: Array<{ token: string; grant: Grant; pickup: boolean }>;
  /** Waiters that can never be granted as asked (a kind's own refusal, such as a limit that differs): they leave with this answer. */
  refused?: Array<{ token: string; code: string; message: string }>;
  /** Nothing more can be granted for this long (the holder's remaining lease, from the store). */
  retryInMs?: number;
  /** Who holds it meanwhile, where the store said (a wait that runs out is told: 409 locked's holder and expiresAt). */
  current?: CurrentHolder;
}

/**
 * The part of waiting that belongs to a lock kind: the lock object's queue
 * asks it which waiters the store grants now and when to try again, and how
 * to take a waiter out of line. The queue itself (order, timeouts, pickups,
 * disconnects, store faults, alarms) is the same for every kind.
 */
export interface LinePolicy<Req, Grant> {
  /**
   * How many waiters from the front one store step is shown (1 for the
   * kinds where only the head can be granted, a batch where many hold): the store may grant or
   * register any of them, so one that leaves is withdrawn.
   */
  readonly batch: number;
  /** One store step for the waiters at the front (`more`: others stand behind them): grant what can be, register the first that cannot. */
  admit(store: LockStore, ref: LockRef, waiters: ReadonlyArray<QueuedWaiter<Req>>, more: boolean): Promise<Admission<Grant>>;
  /**
   * A release found the line empty: drop what the store keeps for a line
   * (a gate that a line lost with a restarted object left behind). Optional.
   */
  idle?(store: LockStore, ref: LockRef): Promise<void>;
  /** A waiter left: unregister it, or take back its grant (see WithdrawReason). True when a grant was taken back. */
  withdraw(store: LockStore, ref: LockRef, token: string, reason: WithdrawReason): Promise<boolean>;
}
