import type { LockRef } from "../types";

/**
 * Every key of one lock shares the hash tag {<kind>:<ns>:<name>}, so each
 * script touches one Redis Cluster slot. Namespaces cannot contain ":" (see
 * http/auth.ts), which keeps ns "a" + name "b:c" apart from ns "a:b" + name "c".
 */
export function mutexKeys(ref: LockRef) {
  const base = `hf:{mx:${ref.ns}:${ref.name}}`;
  return {
    lock: base,
    fence: `${base}:fence`,
    request: (requestId: string) => `${base}:rq:${requestId}`,
  };
}

/** An idempotency key's record, its last fence and its remembered answers. */
export function idempotencyKeys(ref: LockRef) {
  const base = `hf:{id:${ref.ns}:${ref.name}}`;
  return {
    record: base,
    fence: `${base}:fence`,
    request: (requestId: string) => `${base}:rq:${requestId}`,
  };
}
