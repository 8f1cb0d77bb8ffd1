import type { LockRef } from "../../store/types.js";

/**
 * A mutex's Redis keys (lua/FIELDS.md). Its state is one hash, `hf:{mx:<ns>:<name>}`:
 * the lease, the last fence, the lock object's registered waiter; beside it, under the
 * same hash tag, only what a release remembers (a request's answer, watched fences that
 * ended on purpose), the lock object's watchers marker, and the last fence as 0.1 kept it
 * (a key of its own, read only where the hash has none). Built from the hash's name
 * where needed: a try-lock needs two strings, not seven.
 */
export const mutexKeys = {
  lock: (ref: LockRef) => `hf:{mx:${ref.ns}:${ref.name}}`,
  /** 0.1's last fence: read by acquire, inspect and raise_fence only when the hash keeps none. */
  legacyFence: (lock: string) => `${lock}:fence`,
  ended: (lock: string) => `${lock}:ended`,
  request: (lock: string, requestId: string) => `${lock}:rq:${requestId}`,
  /** Exists while the lock object has watch sockets (src/lockObject/sockets/watchMarker.ts); only the Worker's writes pass it. */
  watchers: (lock: string) => `${lock}:watchers`,
};

/** The keys the mutex's scripts run on (an election's are its own, with the same fields). */
export type MutexKeys = typeof mutexKeys;
