import type { LockRef } from "../../store/LockRef.js";
import { lockKeyBase } from "../../store/redis/lockKeyBase.js";

/** A mutex's hash, its last fence, its registered waiter, its lock-delay, its ended fences and remembered answers. */
export function mutexKeys(ref: LockRef) {
  const k = lockKeyBase("mx", ref);
  return { lock: k.base, fence: k.fence, next: `${k.base}:next`, delay: `${k.base}:delay`, ended: k.ended, request: k.request };
}
