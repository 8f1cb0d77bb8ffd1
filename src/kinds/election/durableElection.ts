import { type ElectionChange, type ElectionOps, type ElectionView, HISTORY_KEPT, type ProclaimResult } from "./types.js";
import { durableMutex, LEASE, type Lease, liveLease } from "../mutex/durableMutex.js";

/**
 * An election on the Durable store: the mutex's rules on the election's own
 * lock object's storage (src/kinds/mutex/durableMutex.ts), and what Redis's
 * scripts add for it: proclaim (lua/election/proclaim.lua), and the history
 * (history_add in lua/prelude.lua), appended in the same call as each write
 * that made a new leader or changed its value.
 */

interface History {
  last: number;
  /** The kept changes, oldest first (at most HISTORY_KEPT). */
  kept: ElectionChange[];
}

const HISTORY = "election:history";

function addChange(kv: SyncKvStorage, now: number, term: number, value: string): number {
  const h = kv.get<History>(HISTORY) ?? { last: 0, kept: [] };
  const position = h.last + 1;
  kv.put<History>(HISTORY, { last: position, kept: [...h.kept, { position, term, value, at: now }].slice(-HISTORY_KEPT) });
  return position;
}

/** A write of the mutex's rules, and a change appended if it made a new leader (a new fence on a live lease). */
function noted<A extends unknown[], R>(kv: SyncKvStorage, write: (...args: A) => Promise<R>) {
  return async (...args: A): Promise<R> => {
    const before = liveLease(kv, Date.now())?.fence;
    const r = await write(...args);
    const now = Date.now();
    const after = liveLease(kv, now);
    if (after && after.fence !== before) addChange(kv, now, after.fence, after.holder ?? "");
    return r;
  };
}

function proclaim(kv: SyncKvStorage, now: number, token: string, value: string): ProclaimResult {
  const lease = liveLease(kv, now);
  if (lease?.owner !== token) return { status: "lost" };
  let position = kv.get<History>(HISTORY)?.last ?? 0;
  if (lease.holder !== value) {
    kv.put<Lease>(LEASE, { ...lease, holder: value });
    position = addChange(kv, now, lease.fence, value);
  }
  return { status: "ok", fence: lease.fence, expiresAt: lease.expiresAt, position };
}

function observe(kv: SyncKvStorage, now: number, since: number): ElectionView {
  const lease = liveLease(kv, now);
  const h = kv.get<History>(HISTORY) ?? { last: 0, kept: [] };
  return {
    leader: lease ? { term: lease.fence, value: lease.holder ?? "", expiresAt: lease.expiresAt } : null,
    position: h.last,
    first: h.kept[0]?.position ?? null,
    changes: h.kept.filter((c) => c.position > since),
  };
}

export function durableElection(kv: SyncKvStorage): ElectionOps {
  const rules = durableMutex(kv);
  return {
    ...rules,
    acquire: noted(kv, rules.acquire),
    release: noted(kv, rules.release),
    proclaim: async (_ref, { token, value }) => proclaim(kv, Date.now(), token, value),
    observe: async (_ref, { since }) => observe(kv, Date.now(), since),
  };
}
