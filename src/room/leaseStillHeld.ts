import type { LockStore } from "../store/types";
import type { WatchedLease } from "./types";

/**
 * Asks the store whether a watched lease still runs, and until when. A
 * lease that ended on purpose (an idempotency key completed under this
 * fence) is "ended": no notification. Anything else gone is "lapsed".
 */
export async function leaseStillHeld(
  store: LockStore,
  lease: WatchedLease,
): Promise<{ state: "held"; expiresAt: number } | { state: "ended" } | { state: "lapsed" }> {
  const ref = { ns: lease.ns, name: lease.name };
  if (lease.kind === "idempotency") {
    const s = await store.idempotencyInspect(ref);
    if (s.state === "started" && s.fence === lease.fence) return { state: "held", expiresAt: s.expiresAt };
    if (s.state === "completed" && s.fence === lease.fence) return { state: "ended" };
    return { state: "lapsed" };
  }
  const s = await store.mutexInspect(ref);
  if (s.held && s.fence === lease.fence && s.expiresAt !== null) return { state: "held", expiresAt: s.expiresAt };
  return { state: "lapsed" };
}
