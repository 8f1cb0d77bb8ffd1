import type { LockStore } from "../store/types.js";
import type { StoreKind } from "./line/waitProtocol.js";
import type { ObjectTimers } from "./timers.js";

/**
 * What a lock kind's part of the lock object (src/kinds/<kind>/objectPart.ts)
 * gets from the object's core: its stores, its timers, and a way to say what
 * its own writes did (the core's line then moves).
 */
export interface LockObjectHost {
  /** This object's own storage, as a store (the Durable store). */
  readonly ownStore: LockStore;
  /** Redis (from the object's own configuration) or the local store. */
  storeOf(kind: StoreKind): LockStore;
  /** A write the part made (a Durable-store operation, a socket holder's release): the line hears of it (Line.noteWrite). */
  noteWrite(note: unknown, store: StoreKind): void;
  /** A grant was picked up (its holder heartbeated). */
  pickedUp(token: string): void;
  /** Timers that let the object hibernate (timers.ts). */
  readonly timers: ObjectTimers;
}
