import type { KindName } from "../../kinds/registry/ops.js";
import type { LockRef } from "../LockRef.js";
import type { LockObjectRpc } from "../../lockObject/LockObjectRpc.js";

/** The names lock objects are found by: a kind, or "health" (the Durable store's ping target). */
export type LockKindName = KindName | "health";

/** One LockObject per (kind, namespace, name): the same id from anywhere. */
export function lockObjectOf(objects: DurableObjectNamespace<LockObjectRpc>, kind: LockKindName, ref: LockRef): DurableObjectStub<LockObjectRpc> {
  return objects.get(objects.idFromName(`${kind}:${ref.ns}:${ref.name}`));
}
