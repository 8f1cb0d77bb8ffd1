import { kindKey } from "../../store/kinds.js";
import type { IdempotencyWait } from "./wait.js";
import type { LockRef } from "../../store/types.js";
import type { WatchedLeaseId, WatchState } from "../../store/types.js";
import type { AnsweredWrite } from "../../store/types.js";

/** What both stores do for idempotency keys; test/conformance holds them to the same behaviour. */

/** Its request id: the same on a retry of the same request, which then gets the first answer. */
export interface IdempotencyBeginInput extends AnsweredWrite {
  /** The new owner token, used only if this begin starts the work. */
  token: string;
  ttlMs: number;
  /** How long the record (fingerprint, then response) is kept. */
  retainMs: number;
  fingerprint?: string;
  /** The owner's label, kept while it works. */
  holder?: string;
}

export type IdempotencyBeginResult =
  | { status: "started"; token: string; fence: number; ttlMs: number; expiresAt: number }
  | { status: "completed"; response: unknown; completedAt: number; fence: number }
  | { status: "in_progress"; retryAfterMs: number; expiresAt: number; holder: string | null }
  | { status: "mismatch" };

export type IdempotencyHeartbeatResult = { status: "ok"; expiresAt: number; ttlMs: number; fence: number } | { status: "lost" };

/**
 * `waited` (Redis store): a begin was answered in_progress, or a waiter
 * looked (inspectWaiting), while the work ran, so someone may be waiting on
 * the key's lock object for this result (the Durable store's object hears
 * every complete in the same call).
 */
export type IdempotencyCompleteResult =
  /** keptUntil: the Durable store says until when it keeps the result (its namespace's listing keeps it that long). */
  { status: "ok"; completedAt: number; fence: number; waited?: boolean; keptUntil?: number } | { status: "lost" };

export type IdempotencyFailResult = { status: "ok"; fence: number } | { status: "lost" };

/** What GET shows: never the token. A start whose deadline passed is absent. */
export type IdempotencyState =
  | { state: "absent" }
  | { state: "started"; fence: number; expiresAt: number; holder: string | null }
  | { state: "completed"; fence: number; completedAt: number; response: unknown };

export interface IdempotencyOps {
  begin(ref: LockRef, input: IdempotencyBeginInput): Promise<IdempotencyBeginResult>;
  heartbeat(ref: LockRef, input: { token: string; ttlMs?: number }): Promise<IdempotencyHeartbeatResult>;
  /** `responseJson` is the response's JSON text, already size-checked. */
  complete(ref: LockRef, input: { token: string; responseJson: string } & AnsweredWrite): Promise<IdempotencyCompleteResult>;
  fail(ref: LockRef, input: { token: string } & AnsweredWrite): Promise<IdempotencyFailResult>;
  inspect(ref: LockRef): Promise<IdempotencyState>;
  /**
   * inspect, for a caller that waits for the run's end (the key's lock
   * object, for a wait socket): a start is marked so that its complete tells
   * the lock object (Redis store: `waited`). The Durable store's object hears
   * every complete anyway: there it is inspect.
   */
  inspectWaiting(ref: LockRef): Promise<IdempotencyState>;
  /** The start of this fence, for its onExpire watch. */
  watch(ref: LockRef, lease: WatchedLeaseId): Promise<WatchState>;
}

/** Redis store: the key's start ended on purpose (failed): its watch ends with no notification. */
export interface IdempotencyWriteNote {
  fence: number;
}

/** An idempotency key's kind name, carrying the types of its store operations, its wait request and its write notes. */
export const IDEMPOTENCY = kindKey<IdempotencyOps, IdempotencyWait, IdempotencyWriteNote>()("idempotency");
