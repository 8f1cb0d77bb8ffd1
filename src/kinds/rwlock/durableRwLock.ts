import { REQUEST_MEMORY_MS } from "../../limits.js";
import { recall, remember } from "../../store/durable/answerMemory.js";
import { issueFence, lastFence } from "../../store/durable/records.js";
import {
  FENCE,
  durableHolderKind,
  firstEnd,
  firstInWay,
  gateExists,
  type HolderLease,
  type HolderSet,
  labelsOf,
  load,
  markEnded,
  save,
} from "../manyHolders/durableHolders.js";
import { gateAfterStep, grantedAgain, lineFirst, newLease, pickedUp, stopInGate } from "../manyHolders/durableSteps.js";
import type { Admitted } from "../manyHolders/types.js";
import type {
  RwAcquireInput,
  RwAcquireResult,
  RwGrant,
  RwLockOps,
  RwMode,
  RwQueuedHolder,
  RwReleaseInput,
  RwReleaseResult,
  RwState,
} from "./types.js";

/**
 * The read-write lock on the Durable store, the same rules as lua/rwlock/*.lua:
 * each function runs synchronously on the lock object's storage (atomic
 * like a script); `now` is the object's clock.
 */

interface RwHolder extends HolderLease {
  /** Write holds (re-entry counts). */
  w: number;
  /** Read holds. */
  r: number;
}

type RwSet = HolderSet<RwHolder>;

const hasWriter = (h: RwHolder) => h.w > 0;

function rwGrantOfHolder(name: string, token: string, mode: RwMode, h: RwHolder): RwGrant {
  return { name, token, mode, fence: h.fence, ttlMs: h.ttl, expiresAt: h.exp, count: mode === "write" ? h.w : h.r };
}

/** The fence for a new holder: readers joining readers share theirs; anything else gets the next one. */
function fenceFor(kv: SyncKvStorage, set: RwSet, now: number): number {
  const any = Object.values(set.holders)[0];
  return any ? any.fence : issueFence(kv, FENCE, now);
}

/** Whether a new holder in this mode can be granted now, and if not, the earliest lease end in its way. */
function blockedUntil(set: RwSet, mode: RwMode): number | undefined {
  return mode === "read" ? firstEnd(set, hasWriter) : firstEnd(set);
}

function newHolder(kv: SyncKvStorage, set: RwSet, now: number, w: RwAcquireInput | RwQueuedHolder): RwHolder {
  return { w: w.mode === "write" ? 1 : 0, r: w.mode === "read" ? 1 : 0, ...newLease(now, w, fenceFor(kv, set, now)) };
}

function acquire(kv: SyncKvStorage, now: number, name: string, input: RwAcquireInput): RwAcquireResult {
  const set = load<RwHolder>(kv, now);
  const mine = set.holders[input.token];
  if (input.reenter) {
    if (!mine) return { status: "lost" };
    // Replayed only while the lease it names stands: a retry after it lapsed (and another took the lock) is lost.
    const seen = recall<RwAcquireResult>(kv, input, now);
    if (seen) return seen;
    if (input.mode === "write" && mine.w === 0) return { status: "upgrade" };
    const next: RwHolder = {
      ...mine,
      w: mine.w + (input.mode === "write" ? 1 : 0),
      r: mine.r + (input.mode === "read" ? 1 : 0),
      ttl: input.ttlMs,
      exp: now + input.ttlMs,
      watch: mine.watch || input.watch,
      ...(input.holder ? { holder: input.holder } : {}),
    };
    delete next.pickupBy; // the holder is alive: its grant is picked up
    delete next.lastTtl; // and its lease is ttl long again
    set.holders[input.token] = next;
    save(kv, set);
    return remember<RwAcquireResult>(
      kv,
      input,
      { status: "granted", grant: rwGrantOfHolder(name, input.token, input.mode, next) },
      now + REQUEST_MEMORY_MS,
    );
  }
  if (mine) return { status: "granted", grant: rwGrantOfHolder(name, input.token, input.mode, pickedUp(kv, set, input.token)) };
  const until = blockedUntil(set, input.mode);
  if (until !== undefined) {
    const current = firstInWay(set, input.mode === "read" ? hasWriter : undefined);
    return { status: "busy", retryAfterMs: Math.max(until - now, 1), queued: false, ...(current ? { current } : {}) };
  }
  const waiting = lineFirst(kv, now);
  if (waiting) return waiting;
  const h = newHolder(kv, set, now, input);
  set.holders[input.token] = h;
  save(kv, set);
  return { status: "granted", grant: rwGrantOfHolder(name, input.token, input.mode, h) };
}

function admit(kv: SyncKvStorage, now: number, name: string, waiters: RwQueuedHolder[], more: boolean): Admitted<RwGrant> {
  const set = load<RwHolder>(kv, now);
  const granted: RwGrant[] = [];
  let stopped: RwQueuedHolder | undefined;
  for (const w of waiters) {
    const again = grantedAgain(set, w, now);
    if (again) {
      granted.push(rwGrantOfHolder(name, w.token, w.mode, again));
      continue;
    }
    if (blockedUntil(set, w.mode) !== undefined) {
      stopped = w;
      break;
    }
    const h = newHolder(kv, set, now, w);
    set.holders[w.token] = h;
    granted.push(rwGrantOfHolder(name, w.token, w.mode, h));
  }
  save(kv, set);
  if (stopped) {
    stopInGate(kv, set, stopped.token, now);
    const until = blockedUntil(set, stopped.mode) ?? now;
    return { granted, refused: [], retryAfterMs: Math.max(until - now, 1) };
  }
  gateAfterStep(kv, now, more);
  return { granted, refused: [] };
}

function release(kv: SyncKvStorage, now: number, input: RwReleaseInput): RwReleaseResult {
  const seen = recall<RwReleaseResult>(kv, input, now);
  if (seen) return seen;
  const set = load<RwHolder>(kv, now);
  const mine = set.holders[input.token];
  if (!mine) return { status: "lost" };
  const mode: RwMode = input.mode === "any" ? (mine.w > 0 ? "write" : "read") : input.mode;
  if ((mode === "write" ? mine.w : mine.r) === 0) return { status: "lost" };
  const next: RwHolder = { ...mine, w: mine.w - (mode === "write" ? 1 : 0), r: mine.r - (mode === "read" ? 1 : 0) };
  const released = next.w === 0 && next.r === 0;
  if (released) {
    delete set.holders[input.token];
    if (mine.watch) markEnded(kv, input.token, now);
  } else set.holders[input.token] = next;
  save(kv, set);
  const r: RwReleaseResult = {
    status: "ok",
    released,
    mode,
    count: mode === "write" ? next.w : next.r,
    watched: mine.watch,
    waiters: gateExists(kv, now),
  };
  return remember(kv, input, r, now + REQUEST_MEMORY_MS);
}

function inspect(kv: SyncKvStorage, now: number): RwState {
  const set = load<RwHolder>(kv, now);
  const holders = Object.values(set.holders);
  const writer = holders.some(hasWriter);
  const readers = holders.filter((h) => h.r > 0).length;
  return {
    mode: writer ? "write" : readers > 0 ? "read" : "free",
    readers,
    writer,
    fence: holders[0]?.fence ?? lastFence(kv, FENCE, now) ?? null,
    holderLabels: labelsOf(set),
    expiresAt: firstEnd(set) ?? null,
  };
}

/** The read-write lock's operations on one lock object's storage, by the object's clock (the Durable store). */
export function durableRwLock(kv: SyncKvStorage): RwLockOps {
  return durableHolderKind(kv, { acquire, admit, release, inspect });
}
