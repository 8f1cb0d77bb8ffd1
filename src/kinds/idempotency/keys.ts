import type { LockRef } from "../../store/LockRef";

/** An idempotency key's record, its last fence and its remembered answers, under one hash tag (see mutex/keys.ts). */
export function idempotencyKeys(ref: LockRef) {
  const base = `hf:{id:${ref.ns}:${ref.name}}`;
  return {
    record: base,
    fence: `${base}:fence`,
    ended: `${base}:ended`,
    request: (requestId: string) => `${base}:rq:${requestId}`,
  };
}
