import type { LockStore } from "../store/types";
import type { WatchedLease } from "./types";

/** Asks the store whether a watched lease still runs, and until when. */
export async function leaseStillHeld(store: LockStore, lease: WatchedLease): Promise<{ held: boolean; expiresAt?: number }> {
  const state = await store.mutexInspect({ ns: lease.ns, name: lease.name });
  if (state.held && state.fence === lease.fence && state.expiresAt !== null) return { held: true, expiresAt: state.expiresAt };
  return { held: false };
}
