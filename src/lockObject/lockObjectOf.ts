import type { LockKindName, LockObjectRpc } from "../store/durable/LockObjectRpc.js";
import type { LockRef } from "../store/types.js";

/**
 * One LockObject per (kind, namespace, name): the same id from anywhere. The address is the lock
 * object's own: the Worker's calls (lockObjectClient.ts) and its sockets find an object by it, and
 * the Durable store is handed it where the Worker builds the store (src/worker/stores.ts).
 */
export function lockObjectOf(objects: DurableObjectNamespace<LockObjectRpc>, kind: LockKindName, ref: LockRef): DurableObjectStub<LockObjectRpc> {
  return objects.get(idOf(objects, `${kind}:${ref.ns}:${ref.name}`));
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
