import type { KindName } from "../store/kinds.js";
import type { LockRef } from "../store/types.js";
import type { EveryKindStore, LockStore } from "../store/types.js";
import type { ObjectTimers } from "./timers.js";
import type { StoreKind } from "./line/waitProtocol.js";

/**
 * What a lock kind's part of the lock object (src/kinds/<kind>/objectPart.ts)
 * gets from the object's core: its stores, and its lease watches. A new kind
 * brings its own part (listed in src/kinds/registry/object.ts); the core does
 * not change.
 */
export interface LockObjectHost {
  /** This object's own storage, as a store (the Durable store). */
  readonly ownStore: EveryKindStore;
  /** Redis (from the object's own configuration) or the local store. */
  storeOf(kind: StoreKind): LockStore;
  /** Watch a lease for onExpire, looked at again when it would end (after ttlMs, by our clock). */
  watchLease(lease: {
    kind: KindName;
    store: StoreKind;
    ref: LockRef;
    fence: number;
    token?: string;
    expiresAt: number;
    ttlMs: number;
    onExpire: string;
    /** The holder's label, carried in the notification. */
    holderLabel?: string;
  }): void;
  /** The lease of this watch id (its fence, or its token where a kind has many holders) ended on purpose: no notification. */
  dropWatch(id: number | string): void;
  /** Timers that let the object hibernate (timers.ts): the lines' deadlines and wake-ups. */
  readonly timers: ObjectTimers;
  /** A waiter joined or left the line: the waiters count a watcher sees moved (LockWatchers.ts). */
  lineChanged?(): void;
}
