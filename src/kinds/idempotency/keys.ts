import type { LockRef } from "../../store/types.js";
import { lockKeyBase } from "../../store/redis/lockKeyBase.js";

/** An idempotency key's record, its last fence, its ended fences, its remembered answers and watchers marker. */
export function idempotencyKeys(ref: LockRef) {
  const k = lockKeyBase("id", ref);
  return { record: k.base, fence: k.fence, ended: k.ended, request: k.request, watchers: k.watchers };
}
