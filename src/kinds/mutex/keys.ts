import type { LockRef } from "../../store/LockRef";

/**
 * Every key of one mutex shares the hash tag {mx:<ns>:<name>}, so each script
 * touches one Redis Cluster slot. Namespaces cannot contain ":" or braces
 * (NAMESPACE_PATTERN, checked by the HTTP layer and the library alike) and
 * names cannot contain braces, so no two (namespace, name) pairs share a key.
 */
export function mutexKeys(ref: LockRef) {
  const base = `hf:{mx:${ref.ns}:${ref.name}}`;
  return {
    lock: base,
    fence: `${base}:fence`,
    next: `${base}:next`,
    ended: `${base}:ended`,
    request: (requestId: string) => `${base}:rq:${requestId}`,
  };
}
