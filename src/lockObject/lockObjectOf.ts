import type { KindName } from "../kinds/registry/ops.js";
import type { LockRef } from "../store/LockRef.js";
import type { LockObject } from "./LockObject.js";

/** The names lock objects are found by: a kind, or "health" (the Durable store's ping target). */
export type LockKindName = KindName | "health";

/** One LockObject per (kind, namespace, name): the same id from anywhere. */
export function lockObjectOf(objects: DurableObjectNamespace<LockObject>, kind: LockKindName, ref: LockRef): DurableObjectStub<LockObject> {
  return objects.get(objects.idFromName(`${kind}:${ref.ns}:${ref.name}`));
}
