import type { KindName } from "../kinds.js";
import { kindOps, type LockRef, type LockStore } from "../types.js";
import type { LockObjectRpc } from "./LockObjectRpc.js";

/** The names lock objects are found by: a kind, or "health" (the Durable store's ping target). */
export type LockKindName = KindName | "health";

/** One LockObject per (kind, namespace, name): the same id from anywhere. */
export function lockObjectOf(objects: DurableObjectNamespace<LockObjectRpc>, kind: LockKindName, ref: LockRef): DurableObjectStub<LockObjectRpc> {
  return objects.get(idOf(objects, `${kind}:${ref.ns}:${ref.name}`));
}

/**
 * The lock object a socket of `kind` goes to, on a store that has the kind: NotSupportedError (HTTP
 * 501) where `store` leaves it out (kindOps), so the handshake is refused before any socket.
 */
export function lockObjectOfKindOn(
  store: LockStore,
  objects: DurableObjectNamespace<LockObjectRpc>,
  kind: KindName,
  ref: LockRef,
): DurableObjectStub<LockObjectRpc> {
  kindOps(store, kind);
  return lockObjectOf(objects, kind, ref);
}

/** Ids of the locks used lately, per binding: an id is no I/O object, so it outlives the request that made it (a stub does not). */
const ids = new WeakMap<DurableObjectNamespace<LockObjectRpc>, Map<string, DurableObjectId>>();
/** Names kept per binding before the memory starts over. */
const IDS_KEPT = 1000;

/** idFromName hashes the name every time: a lock used again (its acquire, then its release) reuses its id. */
function idOf(objects: DurableObjectNamespace<LockObjectRpc>, name: string): DurableObjectId {
  let known = ids.get(objects);
  if (!known) {
    known = new Map();
    ids.set(objects, known);
  }
  let id = known.get(name);
  if (!id) {
    if (known.size >= IDS_KEPT) known.clear();
    id = objects.idFromName(name);
    known.set(name, id);
  }
  return id;
}
