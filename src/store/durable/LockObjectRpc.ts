import type { KindName } from "../kinds.js";

/** The names lock objects are found by: a kind, or "health" (the Durable store's ping target). */
export type LockKindName = KindName | "health";

/** A lock object's stub by its kind and lock (src/lockObject/lockObjectOf.ts: the Worker hands it to the Durable store). */
export type LockObjectOf = (kind: LockKindName, ref: { ns: string; name: string }) => DurableObjectStub<LockObjectRpc>;

/**
 * What the Worker can call on a lock object (LockObject implements it): the
 * binding's type, so the Worker's side needs nothing of the object's code.
 * Besides these, fetch takes POST /wait (waitProtocol.ts).
 */
export interface LockObjectRpc extends Rpc.DurableObjectBranded {
  /** Redis store: the Worker's note of a write it made there (a release, a key given up). */
  noteWrite(kind: KindName, note: unknown): void;
  /** Redis store: the Worker changed the lock there; the object's watchers read its state again. */
  noteChange(kind: KindName): void;
  /** The Worker delivered a queued grant's answer to its client. */
  pickedUp(kind: KindName, token: string): void;
  /** The Worker could not deliver a queued grant's answer (its client was gone): the grant goes back to the line. */
  takeBack(kind: KindName, token: string): void;
  waiterCount(kind: KindName): number;
  /** The client of an HTTP wait (by the wait request's waiterId) hung up: it leaves the line. */
  withdraw(waiterId: string): void;
  /** The Durable store: one of the kind's operations, on the state the object keeps. */
  run(kind: KindName, op: string, args: unknown[]): Promise<unknown>;
  ping(): boolean;
}
