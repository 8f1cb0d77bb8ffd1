import type { ElectionOps, ProclaimResult } from "./types.js";
import { durableMutex, LEASE, type Lease, liveLease } from "../mutex/durableMutex.js";

/**
 * An election on the Durable store: the mutex's rules on the election's own
 * lock object's storage (src/kinds/mutex/durableMutex.ts), and proclaim,
 * the rule of lua/election/proclaim.lua: the leader's live lease gets the
 * new value as its label, nothing else moves.
 */
export function durableElection(kv: SyncKvStorage): ElectionOps {
  return {
    ...durableMutex(kv),
    proclaim: async (_ref, { token, value }) => proclaim(kv, Date.now(), token, value),
  };
}

function proclaim(kv: SyncKvStorage, now: number, token: string, value: string): ProclaimResult {
  const lease = liveLease(kv, now);
  if (lease?.owner !== token) return { status: "lost" };
  kv.put<Lease>(LEASE, { ...lease, holder: value });
  return { status: "ok", fence: lease.fence, expiresAt: lease.expiresAt };
}
