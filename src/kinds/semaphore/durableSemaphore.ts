import { issueFence } from "../../store/durable/records.js";
import {
  FENCE,
  durableHolderKind,
  firstEnd,
  firstInWay,
  labelsOf,
  type HolderLease,
  type HolderSet,
  load,
  save,
} from "../manyHolders/durableHolders.js";
import { gateAfterStep, grantedAgain, lineFirst, newLease, pickedUp, releaseWhole, stopInGate } from "../manyHolders/durableSteps.js";
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
function newHolder(kv: SyncKvStorage, now: number, w: SemaphoreAcquireInput & { markPickup?: boolean }): SemHolder {
  return { permits: w.permits, ...newLease(now, w, issueFence(kv, FENCE, now)) };
}

function acquire(kv: SyncKvStorage, now: number, name: string, input: SemaphoreAcquireInput): SemaphoreAcquireResult {
  const set = load<SemHolder>(kv, now);
  const limit = heldBy(set) ? (set.limit ?? input.limit) : input.limit;
  if (set.holders[input.token]) {
    const mine = pickedUp(kv, set, input.token);
    return { status: "granted", grant: semaphoreGrantOfHolder(name, input.token, mine, limit, limit - usedOf(set)) };
  }
  if (heldBy(set) && limit !== input.limit) return { status: "limit_mismatch", limit };
  if (usedOf(set) + input.permits > input.limit) {
    const current = firstInWay(set);
    return { status: "busy", retryAfterMs: Math.max((firstEnd(set) ?? now) - now, 1), queued: false, ...(current ? { current } : {}) };
  }
  const waiting = lineFirst(kv, now);
  if (waiting) return waiting;
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
    const again = grantedAgain(set, w, now);
    if (again) {
      granted.push({ token: w.token, h: again });
      continue;
    }
    if (heldBy(set) && set.limit !== w.limit) {
      refused.push({ token: w.token, code: "limit_mismatch", message: `the holders use limit ${set.limit}` });
      continue;
    }
    if (usedOf(set) + w.permits > w.limit) {
      stopInGate(kv, set, w.token, now);
      stopped = true;
      break;
    }
    const h = newHolder(kv, now, w);
    set.holders[w.token] = h;
    set.limit = w.limit;
    granted.push({ token: w.token, h });
  }
  save(kv, set);
  const limit = set.limit ?? 0;
  const available = limit - usedOf(set);
  const grants = granted.map((g) => semaphoreGrantOfHolder(name, g.token, g.h, limit, available));
  if (stopped) return { granted: grants, refused, retryAfterMs: Math.max((firstEnd(set) ?? now) - now, 1) };
  gateAfterStep(kv, now, more);
  return { granted: grants, refused };
}

function release(kv: SyncKvStorage, now: number, input: { token: string } & AnsweredWrite): SemaphoreReleaseResult {
  return releaseWhole<SemHolder, { permits: number; available: number }>(kv, now, input, (mine, left) => ({
    permits: mine.permits,
    available: (left.limit ?? 0) - usedOf(left),
  }));
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
  return durableHolderKind(kv, { acquire, admit, release, inspect });
}
