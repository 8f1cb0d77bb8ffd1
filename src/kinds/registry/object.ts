import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import type { KindObjectPart } from "../../lockObject/KindObjectPart.js";
import { durableIdempotency, nextIdempotencyDeadline } from "../idempotency/durableIdempotency.js";
import { IdempotencyObjectPart } from "../idempotency/objectPart.js";
import { nextHoldersDeadline } from "../../holders/durableHolders.js";
import { durableMutex, nextMutexDeadline } from "../mutex/durableMutex.js";
import { MutexObjectPart } from "../mutex/objectPart.js";
import { durableRwLock } from "../rwlock/durableRwLock.js";
import { rwLockObjectPart } from "../rwlock/objectPart.js";
import { durableSemaphore } from "../semaphore/durableSemaphore.js";
import { semaphoreObjectPart } from "../semaphore/objectPart.js";
import type { ObjectKinds } from "../../lockObject/ObjectKinds.js";
import type { KindName, KindOps } from "./ops.js";
import { redisStoreOf } from "./stores.js";
import { kindOps, type LockStore } from "../../store/types.js";
import type { LockRef } from "../../store/LockRef.js";
import { waitRequestSchema } from "./waits.js";

/** The kind registry: what each kind brings to its lock object (its part: line, notes of writes, Durable operations). */
export const objectParts: { [K in KindName]: (host: LockObjectHost) => KindObjectPart<K> } = {
  mutex: (host) => new MutexObjectPart(host),
  rwlock: rwLockObjectPart,
  semaphore: semaphoreObjectPart,
  idempotency: (host) => new IdempotencyObjectPart(host),
};

/** The kind registry: each kind's rules on a lock object's own storage (the Durable store). */
export function durableKinds(kv: SyncKvStorage): KindOps {
  return { mutex: durableMutex(kv), rwlock: durableRwLock(kv), semaphore: durableSemaphore(kv), idempotency: durableIdempotency(kv) };
}

/** When each kind's stored state next needs cleaning up (the object's alarm asks them all: after a restart it knows no kind). */
export const durableDeadlines: Array<(kv: SyncKvStorage, now: number) => number | undefined> = [
  nextMutexDeadline,
  nextIdempotencyDeadline,
  nextHoldersDeadline,
];

/**
 * The lock's state as its GET answers it, for a watch socket's pushes: an idempotency key's as stored, a lock's
 * with its name and its line's count (as src/kinds/registry/routes.ts' inspect and the routes add them).
 */
export async function watchedState(kind: KindName, store: LockStore, ref: LockRef, waiters: () => number): Promise<Record<string, unknown>> {
  const state = await kindOps(store, kind).inspect(ref);
  return kind === "idempotency" ? { ...state } : { name: ref.name, ...state, waiters: waiters() };
}

/**
 * What the Worker's entry point hands its lock objects (src/worker.ts): the kinds, as the object's core reaches them,
 * but for the sockets' acquire (./service.ts), which sits in the service layer above this one.
 */
export const objectKinds: Omit<ObjectKinds, "socketAcquire"> = {
  parts: objectParts,
  durable: durableKinds,
  durableDeadlines,
  waitRequest: waitRequestSchema as ObjectKinds["waitRequest"],
  redisStoreOf,
  watchedState,
};
