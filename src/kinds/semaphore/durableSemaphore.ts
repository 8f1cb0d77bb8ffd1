import { PICKUP_MS, REGISTRATION_GRACE_MS, REQUEST_MEMORY_MS } from "../../limits.js";
import { recall, remember } from "../../store/durable/answerMemory.js";
import { issueFence } from "../../store/durable/records.js";
import {
  dropGate,
  FENCE,
  durableHolderOps,
  firstEnd,
  firstInWay,
  labelsOf,
  gateExists,
  type HolderLease,
  type HolderSet,
  lastEnd,
  load,
  markEnded,
  save,
  setGate,
} from "../manyHolders/durableHolders.js";
import type { Admitted } from "../manyHolders/types.js";
import type { AnsweredWrite } from "../../store/types.js";
import type {
  SemaphoreAcquireInput,
  SemaphoreAcquireResult,
  SemaphoreGrant,
  SemaphoreQueuedHolder,
  SemaphoreReleaseResult,
  SemaphoreOps,
  SemaphoreState,
} from "./types.js";

/**
 * The semaphore on the Durable store, the same rules as lua/semaphore/*.lua: each
 * function runs synchronously on the lock object's storage (atomic like a
 * script); `now` is the object's clock.
 */

interface SemHolder extends HolderLease {
  permits: number;
}

type SemSet = HolderSet<SemHolder>;

const usedOf = (set: SemSet) => Object.values(set.holders).reduce((sum, h) => sum + h.permits, 0);
const heldBy = (set: SemSet) => Object.keys(set.holders).length > 0;

function semaphoreGrantOfHolder(name: string, token: string, h: SemHolder, limit: number, available: number): SemaphoreGrant {
  return { name, token, permits: h.permits, limit, fence: h.fence, ttlMs: h.ttl, expiresAt: h.exp, available };
}

/** A new holder's permits and lease, with the next fence. */
function newHolder(kv: SyncKvStorage, now: number, w: { permits: number; ttlMs: number; watch: boolean; holder?: string }): SemHolder {
  return {
    permits: w.permits,
    ttl: w.ttlMs,
    exp: now + w.ttlMs,
    fence: issueFence(kv, FENCE, now),
    watch: w.watch,
    ...(w.holder ? { holder: w.holder } : {}),
  };
}

function acquire(kv: SyncKvStorage, now: number, name: string, input: SemaphoreAcquireInput): SemaphoreAcquireResult {
  const set = load<SemHolder>(kv, now);
  const limit = heldBy(set) ? (set.limit ?? input.limit) : input.limit;
  const mine = set.holders[input.token];
  // A retry of this very acquire finds its own token; its client is alive, so the grant is picked up.
  if (mine) {
    if (mine.pickupBy !== undefined) {
      // A new holder record: the one read is the stored value, read-only (the lock object's KeptKv).
      const { pickupBy: _, ...picked } = mine;
      set.holders[input.token] = picked;
      save(kv, set);
    }
    return { status: "granted", grant: semaphoreGrantOfHolder(name, input.token, mine, limit, limit - usedOf(set)) };
  }
  if (heldBy(set) && limit !== input.limit) return { status: "limit_mismatch", limit };
  if (usedOf(set) + input.permits > input.limit) {
    const current = firstInWay(set);
    return { status: "busy", retryAfterMs: Math.max((firstEnd(set) ?? now) - now, 1), queued: false, ...(current ? { current } : {}) };
  }
  if (gateExists(kv, now)) return { status: "busy", retryAfterMs: 100, queued: true };
  const h = newHolder(kv, now, input);
  set.holders[input.token] = h;
  set.limit = input.limit;
  save(kv, set);
  return { status: "granted", grant: semaphoreGrantOfHolder(name, input.token, h, input.limit, input.limit - usedOf(set)) };
}

function admit(kv: SyncKvStorage, now: number, name: string, waiters: SemaphoreQueuedHolder[], more: boolean): Admitted<SemaphoreGrant> {
  const set = load<SemHolder>(kv, now);
  const granted: Array<{ token: string; h: SemHolder }> = [];
  const refused: Admitted<SemaphoreGrant>["refused"] = [];
  let stopped = false;
  for (const w of waiters) {
    const mine = set.holders[w.token];
    if (mine) {
      // Granted by a step whose answer was lost: answered again; if it must be picked up, its lease from now and
      // marked so (even if that step granted it unmarked: nobody has its token yet).
      if (w.markPickup) set.holders[w.token] = { ...mine, exp: now + mine.ttl, lastTtl: mine.ttl, pickupBy: now + PICKUP_MS };
      granted.push({ token: w.token, h: set.holders[w.token] });
      continue;
    }
    if (heldBy(set) && set.limit !== w.limit) {
      refused.push({ token: w.token, code: "limit_mismatch", message: `the holders use limit ${set.limit}` });
      continue;
    }
    if (usedOf(set) + w.permits > w.limit) {
      setGate(kv, w.token, (lastEnd(set) ?? now) + REGISTRATION_GRACE_MS);
      stopped = true;
      break;
    }
    const h = newHolder(kv, now, w);
    if (w.markPickup) h.pickupBy = now + PICKUP_MS;
    set.holders[w.token] = h;
    set.limit = w.limit;
    granted.push({ token: w.token, h });
  }
  save(kv, set);
  const limit = set.limit ?? 0;
  const available = limit - usedOf(set);
  const grants = granted.map((g) => semaphoreGrantOfHolder(name, g.token, g.h, limit, available));
  if (stopped) return { granted: grants, refused, retryAfterMs: Math.max((firstEnd(set) ?? now) - now, 1) };
  if (more) setGate(kv, "", now + REGISTRATION_GRACE_MS);
  else dropGate(kv);
  return { granted: grants, refused };
}

function release(kv: SyncKvStorage, now: number, input: { token: string } & AnsweredWrite): SemaphoreReleaseResult {
  const seen = recall<SemaphoreReleaseResult>(kv, input, now);
  if (seen) return seen;
  const set = load<SemHolder>(kv, now);
  const mine = set.holders[input.token];
  if (!mine) return { status: "lost" };
  delete set.holders[input.token];
  if (mine.watch) markEnded(kv, input.token, now);
  const limit = set.limit ?? 0;
  save(kv, set);
  const r: SemaphoreReleaseResult = {
    status: "ok",
    permits: mine.permits,
    available: limit - usedOf(set),
    watched: mine.watch,
    waiters: gateExists(kv, now),
  };
  return remember(kv, input, r, now + REQUEST_MEMORY_MS);
}

function inspect(kv: SyncKvStorage, now: number): SemaphoreState {
  const set = load<SemHolder>(kv, now);
  return {
    limit: heldBy(set) ? (set.limit ?? null) : null,
    used: usedOf(set),
    holders: Object.keys(set.holders).length,
    holderLabels: labelsOf(set),
    expiresAt: firstEnd(set) ?? null,
  };
}

/** The semaphore's operations on one lock object's storage, by the object's clock (the Durable store). */
export function durableSemaphore(kv: SyncKvStorage): SemaphoreOps {
  return {
    ...durableHolderOps(kv),
    acquire: async (ref, input) => acquire(kv, Date.now(), ref.name, input),
    admit: async (ref, waiters, more) => admit(kv, Date.now(), ref.name, waiters, more),
    release: async (_ref, input) => release(kv, Date.now(), input),
    inspect: async () => inspect(kv, Date.now()),
  };
}
