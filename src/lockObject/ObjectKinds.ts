import * as z from "zod/mini";
import type { Env } from "../env.js";
import type { KindKey, KindName, OpsOf, WaitOf } from "../store/kinds.js";
import { kindOps, type LockRef, type LockStore } from "../store/types.js";
import type { KindObjectPart } from "./KindObjectPart.js";
import type { LockObjectHost } from "./LockObjectHost.js";
import type { Line } from "./line/Line.js";
import type { WaitRequest } from "./line/waitProtocol.js";
import type { SocketAcquire } from "./sockets/socketLine.js";

/**
 * What a kind brings to its lock object (src/kinds/<kind>/index.ts, the
 * `object` of its descriptor). The object's core names no kind and imports
 * none: the Worker's entry point hands it the list (src/worker/kinds.ts).
 */
export interface ObjectKind<K extends KindKey = KindKey> {
  readonly name: K["name"];
  readonly object: {
    /** Its part of the object: its line, the Worker's notes of its writes, its Durable-store operations. */
    part(host: LockObjectHost): KindObjectPart<K>;
    /** Its rules on the object's own storage (the Durable store). */
    durable(kv: SyncKvStorage): OpsOf<K>;
    /** When its stored state next needs cleaning up (the alarm asks every kind: after a restart it knows none). */
    nextDeadline?(kv: SyncKvStorage, now: number): number | undefined;
    /** Its request to the object (POST /wait), told apart from other kinds' by `kind`. */
    wait: z.ZodMiniType<WaitOf<K>>;
    /** The lock's state as its GET answers it, pushed to watch sockets. */
    watchedState(store: LockStore, ref: LockRef, waiters: () => number): Promise<Record<string, unknown>>;
    /**
     * What a wait socket does: "acquire" (its first message is an acquire, granted from the line), or
     * "awaitEnd" (its first message is a watch of another caller's run, answered at the run's end: the
     * part's awaitEnd).
     */
    socket: "acquire" | "awaitEnd";
  };
}

/** What the lock object is handed (by src/worker.ts): the kinds, the Redis store of them, and a wait socket's acquire. */
export interface ObjectKinds {
  kinds: readonly ObjectKind[];
  /** The Redis store (or a quorum) from the object's own configuration, with the kinds; undefined when none is set. */
  redisStoreOf(env: Env): LockStore | undefined;
  /**
   * A wait socket's acquire, through the kind's service and the acquire flow
   * as over HTTP (src/service/socketAcquire.ts: the service layer, so the
   * entry point hands it in).
   */
  socketAcquire: SocketAcquire;
}

/** The request to a lock object of any of these kinds (POST /wait), told apart by `kind`. */
export function waitRequestOf(kinds: readonly ObjectKind[]): z.ZodMiniType<WaitRequest> {
  const schemas = kinds.map((k) => k.object.wait) as unknown as [z.ZodMiniObject, ...z.ZodMiniObject[]];
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
