import type { KindKey, NoteOf, OpsOf, WaitOf } from "../store/kinds.js";
import type { LockRef, LockStore } from "../store/types.js";
import type { SocketAnswer } from "../wire/socketProtocol.js";
import type { LinePolicy } from "./line/LinePolicy.js";
import type { StoreKind, WaitOutcome } from "./line/waitProtocol.js";

/** A socket holder's heartbeat or release: the HTTP answer's body, or lost. */
export type HeldAnswer = { status: "ok"; answer: Record<string, unknown> } | { status: "lost" };

/** What a write (a release, a key given up) does here: the watches it ends, and what the line does next. */
export interface WriteEffect {
  /** Watch ids (a fence, or a token where holders share a fence) whose lease ended on purpose: no notification. */
  endedWatches: Array<number | string>;
  /** The release handed the lock to this waiter (the store granted its registered token). */
  handedTo?: { token: string; grant: unknown };
  /**
   * The line's next step: "ifWaiting" (its head tries again if it has one), "always" (also with no waiter:
   * the store's line state, a gate, may be dropped), or none.
   */
  next?: "ifWaiting" | "always";
}

/** What a kind with a line brings to it (the core's Line drives it). */
export interface KindLine<Wait, Grant> {
  /** The line's store step: which waiters the store grants now. */
  readonly policy: LinePolicy<unknown, Grant>;
  /** The line's request for a wait. */
  queued(req: Wait): unknown;
  /** A re-entry with a held token: tried at once, never queued, never refused for the line. */
  isReentry(req: Wait): boolean;
}

/**
 * What a lock kind brings to its lock object (src/kinds/<kind>/objectPart.ts):
 * hooks and data. The object's core (src/lockObject/line/Line.ts) drives
 * the line, the tries and the watches, and calls these; a hook answers a
 * value and never calls back into the line.
 */
export interface KindObjectPart<K extends KindKey = KindKey, Grant = unknown> {
  /**
   * The kind's operations on this object's own storage (the Durable store),
   * telling the object what each did (LockObjectHost.noteWrite, pickedUp), so the
   * line moves in the same call.
   */
  readonly durableOps: OpsOf<K>;
  /** Its line: what a wait is to the line and the line's store step. Absent for a kind with no line (idempotency keys). */
  readonly line?: KindLine<WaitOf<K>, Grant>;
  /** One try in the store: a try-lock (waitMs 0), a re-entry, or a kind with no line's one step. */
  tryOnce(store: LockStore, req: WaitOf<K>): Promise<WaitOutcome<Grant>>;
  /** The lease a grant watches for onExpire (undefined: the grant started no lease, such as a replayed key). */
  watchOf(grant: Grant): { fence: number; token?: string; expiresAt: number; ttlMs: number } | undefined;
  /** A write the Worker made in Redis, or the object's own on the Durable store: what it does here. */
  noteWrite(note: NoteOf<K>): WriteEffect;
  /**
   * A holder on its wait socket (kept open after `held`): its heartbeat and
   * release, done here, on either store, with what a release does to the
   * line in the same step; answered as the HTTP API answers them. Absent
   * for kinds with no line.
   */
  heartbeatOnSocket?(ref: LockRef, store: StoreKind, token: string, ttlMs?: number): Promise<HeldAnswer>;
  releaseOnSocket?(ref: LockRef, store: StoreKind, token: string): Promise<HeldAnswer>;
  /**
   * A kind whose wait socket awaits the end of another caller's run (ObjectKind.socket "awaitEnd": an
   * idempotency key): the socket's last message once the run ended or waitMs ran out.
   */
  awaitEnd?(ref: LockRef, store: StoreKind, waitMs: number, signal: AbortSignal): Promise<SocketAnswer>;
  /** Callers waiting on awaitEnd: what a lock's waiters are to its line. */
  readonly awaiting?: number;
}
