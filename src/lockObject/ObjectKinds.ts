import type * as z from "zod/mini";
import type { KindName, KindOps, KindWait } from "../kinds/registry/ops.js";
import type { Env } from "../env.js";
import type { LockStore } from "../store/types.js";
import type { LockRef } from "../store/LockRef.js";
import type { SocketAcquire } from "./sockets/socketLine.js";
import type { KindObjectPart } from "./KindObjectPart.js";
import type { LockObjectHost } from "./LockObjectHost.js";

/**
 * What the lock object is handed of the kinds (by the Worker's entry point,
 * src/worker.ts, from the kind registry): the object's core names no kind and
 * imports none; it reaches every kind, and the Redis store of them, through this.
 */
export interface ObjectKinds {
  /** Each kind's part of its lock object: its line, the Worker's notes of its writes, its Durable-store operations. */
  parts: { [K in KindName]: (host: LockObjectHost) => KindObjectPart<K> };
  /** Each kind's rules on a lock object's own storage (the Durable store). */
  durable(kv: SyncKvStorage): KindOps;
  /** When each kind's stored state next needs cleaning up (the alarm asks them all: after a restart it knows no kind). */
  durableDeadlines: Array<(kv: SyncKvStorage, now: number) => number | undefined>;
  /** The request to a lock object (POST /wait), every kind's, told apart by `kind`. */
  waitRequest: z.ZodMiniType<KindWait[KindName]>;
  /** The lock's state as its GET answers it (a watch socket's pushes): the kind's inspect, with the line's count where it has one. */
  watchedState(kind: KindName, store: LockStore, ref: LockRef, waiters: () => number): Promise<Record<string, unknown>>;
  /** The Redis store (or a quorum) from the object's own configuration, with the kinds; undefined when none is set. */
  redisStoreOf(env: Env): LockStore | undefined;
  /**
   * A wait socket's acquire, through the kind's service and the acquire flow
   * as over HTTP (src/kinds/registry/service.ts: the service layer, so the
   * entry point adds it to what the registry's object part brings).
   */
  socketAcquire: SocketAcquire;
}

/** The Durable store's part of ObjectKinds (LocalStore). */
export type DurableKinds = Pick<ObjectKinds, "durable" | "durableDeadlines">;
