import type { LockRef } from "../../store/types.js";
import { lockKeyBase } from "../../store/redis/lockKeyBase.js";

/** The lock-delay key's name after the lock's (it outlives a lapsed lease: a listing looks for it too). */
export const MUTEX_DELAY_SUFFIX = ":delay";

/** A mutex's hash, its last fence, its registered waiter, its lock-delay, its ended fences, remembered answers and watchers marker. */
export function mutexKeys(ref: LockRef) {
  const k = lockKeyBase("mx", ref);
  return {
    lock: k.base,
    fence: k.fence,
    next: `${k.base}:next`,
    delay: `${k.base}${MUTEX_DELAY_SUFFIX}`,
    ended: k.ended,
    request: k.request,
    watchers: k.watchers,
  };
}
