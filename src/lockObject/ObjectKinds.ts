import * as z from "zod/mini";
import type { Env } from "../env.js";
import type { KindKey, KindName, OpsOf, WaitOf } from "../store/kinds.js";
import { kindOps, type LockRef, type LockStore } from "../store/types.js";
import type { KindObjectPart } from "./KindObjectPart.js";
import type { LockObjectHost } from "./LockObjectHost.js";
import type { Line } from "./line/Line.js";
import type { WaitRequest } from "./line/waitProtocol.js";

/**
 * What a kind brings to its lock object (src/kinds/<kind>/index.ts, the
 * `object` of its descriptor). The object's core names no kind and imports
 * none: the Worker's entry point hands it the list (src/worker/kinds.ts).
 */
export interface ObjectKind<K extends KindKey = KindKey> {
  readonly name: K["name"];
  readonly object: {
    /** Its part of the object: its line or its ending, the Worker's notes of its writes, its Durable-store operations. */
    part(host: LockObjectHost): KindObjectPart<K>;
    /** Its rules on the object's own storage (the Durable store). */
    durable(kv: SyncKvStorage): OpsOf<K>;
    /** When its stored state next needs cleaning up (the alarm asks every kind: after a restart it knows none). */
    nextDeadline?(kv: SyncKvStorage, now: number): number | undefined;
    /** Its request to the object (POST /wait), told apart from other kinds' by `kind` (absent: it sends its object none). */
    wait?: z.ZodMiniType<WaitOf<K>>;
    /** The lock's state as its GET answers it, pushed to watch sockets. */
    watchedState(store: LockStore, ref: LockRef, waiters: () => number): Promise<Record<string, unknown>>;
    /**
     * A kind that keeps its changes at positions (an election's history): its state as watchedState
     * answers it and the changes kept after `since`, in one read. A watch may then open at a position
     * (GET .../watch?since=N, its `http.watchPosition`), and every push to it carries the changes after
     * the last position it was sent (WatchSockets.ts). Absent: a watch takes no position.
     */
    watchedHistory?(store: LockStore, ref: LockRef, waiters: () => number, since: number): Promise<Required<WatchedRead>>;
    /**
     * Its HTTP acquire body's schema, a value: a wait socket's acquire message, less its type and keep,
     * is checked with it (400 as over HTTP) and is then, with the socket's lock (and a read-write lock's
     * mode, from the path), the kind's request to its line. The lock object runs the socket's acquire
     * itself with it, calling no layer above the core. Absent for a kind whose wait socket awaits a
     * state's end (its part's `ending`) or that has none.
     */
    acquireBody?: z.ZodMiniType<AcquireBody>;
  };
}

/** What a watch reads of its lock: the state, and for a watch at a position, the history after it. */
export interface WatchedRead {
  state: Record<string, unknown>;
  history?: {
    /** The last position (0: no change yet). */
    position: number;
    /** The oldest position kept (null: none yet). */
    first: number | null;
    /** The kept changes after the position asked, oldest first. */
    changes: ReadonlyArray<{ position: number }>;
  };
}

/** The watch's one read: with the history after `since` where the watch is at a position and the kind keeps one, else the state alone. */
export async function watchedRead(
  object: ObjectKind["object"],
  store: LockStore,
  ref: LockRef,
  waiters: () => number,
  since: number | undefined,
): Promise<WatchedRead> {
  if (since === undefined || !object.watchedHistory) return { state: await object.watchedState(store, ref, waiters) };
  return object.watchedHistory(store, ref, waiters, since);
}

/** What the lock object is handed (by src/worker.ts): the kinds, and the Redis store of them. */
export interface ObjectKinds {
  kinds: readonly ObjectKind[];
  /** The Redis store (or a quorum) from the object's own configuration, with the kinds; undefined when none is set. */
  redisStoreOf(env: Env): LockStore | undefined;
}

/** What every kind's acquire body holds that the line reads (the rest is the kind's own). */
export type AcquireBody = { ttlMs: number; waitMs: number; token?: string; onExpire?: string };

/** The request to a lock object of any of these kinds (POST /wait), told apart by `kind`. */
export function waitRequestOf(kinds: readonly ObjectKind[]): z.ZodMiniType<WaitRequest> {
  const schemas = kinds.flatMap((k) => (k.object.wait ? [k.object.wait] : [])) as unknown as [z.ZodMiniObject, ...z.ZodMiniObject[]];
  return z.discriminatedUnion("kind", schemas) as unknown as z.ZodMiniType<WaitRequest>;
}

type Inspecting = { inspect(ref: LockRef): Promise<object> };

/** A lock's state as its GET answers it: its name, its store's inspect, and its line's count. */
export const stateWithLine =
  (kind: KindName): ObjectKind["object"]["watchedState"] =>
  async (store, ref, waiters) => ({ name: ref.name, ...(await (kindOps(store, kind) as unknown as Inspecting).inspect(ref)), waiters: waiters() });

/** A state as its store keeps it (an idempotency key's: no line). */
export const stateAsStored =
  (kind: KindName): ObjectKind["object"]["watchedState"] =>
  async (store, ref) => ({ ...(await (kindOps(store, kind) as unknown as Inspecting).inspect(ref)) });

/** The one kind a lock object serves, found once: what it brings, its part and its line. */
export interface Served {
  kind: KindName;
  object: ObjectKind["object"];
  part: KindObjectPart;
  line: Line;
}
