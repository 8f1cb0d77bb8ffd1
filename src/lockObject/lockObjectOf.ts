import type { LockRef } from "../store/LockRef.js";
import type { LockObject } from "./LockObject.js";

/** The lock kinds that have a LockObject ("health" is the Durable store's ping target). */
export type LockKindName = "mutex" | "idempotency" | "rwlock" | "semaphore" | "health";

/** One LockObject per (kind, namespace, name): the same id from anywhere. */
export function lockObjectOf(objects: DurableObjectNamespace<LockObject>, kind: LockKindName, ref: LockRef): DurableObjectStub<LockObject> {
  return objects.get(objects.idFromName(`${kind}:${ref.ns}:${ref.name}`));
}
