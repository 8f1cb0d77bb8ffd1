import type { KindName, KindWriteNote, KindOps, KindWait } from "../store/kinds.js";
import type { LockRef } from "../store/types.js";
import type { SocketAnswer } from "../wire/socketProtocol.js";
import type { StoreKind, WaitOutcome } from "./line/waitProtocol.js";

/** A socket holder's heartbeat or release: the HTTP answer's body, or lost. */
export type HeldAnswer = { status: "ok"; answer: Record<string, unknown> } | { status: "lost" };
import type { WaitOptions } from "./line/WaitQueue.js";

/**
 * What a lock kind brings to its lock object (src/kinds/<kind>/objectPart.ts).
 * Each object serves one kind, so it holds one part; the core (LockObject.ts)
 * reaches it only through this shape, for every kind alike.
 */
export interface KindObjectPart<K extends KindName> {
  /**
   * The kind's operations on this object's own storage (the Durable store),
   * with what each does to the line and the watches in the same call (a
   * release hands the lock to the next waiter, a heartbeat picks a grant up).
   */
  readonly durableOps: KindOps[K];
  /** A wait in the line, or one try with a watch. */
  wait(req: KindWait[K], signal: AbortSignal, options?: WaitOptions): Promise<WaitOutcome<unknown>>;
  /** Redis store: what the Worker tells after a write it made there. */
  noteWrite(note: KindWriteNote[K]): void;
  /** A grant from the line reached its client. */
  pickedUp(token: string): void;
  /** A grant from the line whose client left before acknowledging it: back to the line at once. */
  takeBack(token: string): void;
  /** Whether that grant was already taken back (its acknowledgement came too late). */
  wasTakenBack(token: string): boolean;
  readonly waiterCount: number;
  /**
   * A holder on its wait socket (kept open after `held`): its heartbeat and
   * release, done here, on either store, with what a release does to the
   * line in the same step; answered as the HTTP API answers them. Absent
   * for kinds with no line (idempotency keys).
   */
  heartbeatOnSocket?(ref: LockRef, store: StoreKind, token: string, ttlMs?: number): Promise<HeldAnswer>;
  releaseOnSocket?(ref: LockRef, store: StoreKind, token: string): Promise<HeldAnswer>;
  /**
   * A kind whose wait socket awaits the end of another caller's run (ObjectKind.socket "awaitEnd": an
   * idempotency key): the socket's last message once the run ended or waitMs ran out.
   */
  awaitEnd?(ref: LockRef, store: StoreKind, waitMs: number, signal: AbortSignal): Promise<SocketAnswer>;
}
