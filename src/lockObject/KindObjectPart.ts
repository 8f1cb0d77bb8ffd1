import type { KindKey, NoteOf, OpsOf, WaitOf } from "../store/kinds.js";
import type { LockRef, LockStore } from "../store/types.js";
import type { KindSocketAnswer } from "../wire/socketProtocol.js";
import type { LinePolicy } from "./line/LinePolicy.js";
import type { StoreKind, WaitOutcome } from "./line/waitProtocol.js";

/** A socket holder's heartbeat or release: the HTTP answer's body, or lost. */
export type HeldAnswer = { status: "ok"; answer: Record<string, unknown> } | { status: "lost" };

/** What a write (a release, a key given up) does here: the watches it ends, and what the line does next. */
export interface WriteEffect {
  /** Expiries (a fence, or a token where holders share a fence) whose lease ended on purpose: no notification. */
  endedExpiries: Array<number | string>;
  /** The release handed the lock to this waiter (the store granted its registered token). */
  handedTo?: { token: string; grant: unknown };
  /**
   * The line's next step: "ifWaiting" (its head tries again if it has one), "always" (also with no waiter:
   * the store's line state, a gate, may be dropped), or none.
   */
  next?: "ifWaiting" | "always";
}

/**
 * What a kind with a line brings to it (the core's Line drives it): its store step, which reads each
 * waiter's request as it came (a request with a held `token` is a re-entry: never queued, the core's rule).
 */
export interface KindLine<Wait, Grant> {
  /** The line's store step: which waiters the store grants now. */
  readonly policy: LinePolicy<Wait, Grant>;
}

/**
 * What a kind whose wait socket awaits the end of a state (an idempotency key's run) brings, instead of a
 * line: one look at the store. The core's line (Line.awaitEnd) looks now, again at every write noted
 * here, and when the state would end by itself, until it ended or the wait ran out.
 */
export interface KindEnding {
  /** The state now: ended (the socket's last message: the kind's own answer), or when it would end by itself, in ms. */
  look(store: LockStore, ref: LockRef): Promise<{ ended: KindSocketAnswer } | { endsInMs: number }>;
}

/**
 * What a lock kind brings to its lock object (src/kinds/<kind>/objectPart.ts):
 * hooks and data. The object's core (src/lockObject/line/Line.ts) drives
 * the line, the tries, the awaited ends and the expiries, and calls these;
 * a hook answers a value and never calls back into the line. Only
 * durableOps is asked of every kind: a hook a kind does not need (it has no
 * line, sends its object no request, keeps no lease for onExpire) it leaves out.
 */
export interface KindObjectPart<K extends KindKey = KindKey, Grant = unknown> {
  /**
   * The kind's operations on this object's own storage (the Durable store),
   * telling the object what each did (LockObjectHost.noteWrite, pickedUp), so the
   * line moves in the same call.
   */
  readonly durableOps: OpsOf<K>;
  /** Its line: what a wait is to the line and the line's store step (a kind that grants from a line). */
  readonly line?: KindLine<WaitOf<K>, Grant>;
  /** What its wait socket awaits instead of a grant (a kind whose socket awaits a state's end: an idempotency key). */
  readonly ending?: KindEnding;
  /** One try in the store: a try-lock (waitMs 0), a re-entry, or a kind with no line's one step (a kind that sends its object requests). */
  tryOnce?(store: LockStore, req: WaitOf<K>): Promise<WaitOutcome<Grant>>;
  /** The lease a grant keeps for onExpire (undefined: the grant started no lease, such as a replayed key). */
  expiryOf?(grant: Grant): { fence: number; token?: string; expiresAt: number; ttlMs: number } | undefined;
  /** A write the Worker made in Redis, or the object's own on the Durable store: what it does here (absent: nothing). */
  noteWrite?(note: NoteOf<K>): WriteEffect;
  /**
   * A holder on its wait socket (kept open after `held`): its heartbeat and
   * release, done here, on either store, with what a release does to the
   * line in the same step; answered as the HTTP API answers them. Absent
   * for kinds with no line.
   */
  heartbeatOnSocket?(ref: LockRef, store: StoreKind, token: string, ttlMs?: number): Promise<HeldAnswer>;
  releaseOnSocket?(ref: LockRef, store: StoreKind, token: string): Promise<HeldAnswer>;
}
