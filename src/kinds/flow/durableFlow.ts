import { PICKUP_MS, REGISTRATION_GRACE_MS, REQUEST_MEMORY_MS } from "../../limits.js";
import { recall, remember } from "../../store/durable/answerMemory.js";
import { issueFence } from "../../store/durable/records.js";
import {
  dropGate,
  durableHolderOps,
  FENCE,
  firstEnd,
  firstInWay,
  gateExists,
  type HolderLease,
  type HolderSet,
  labelsOf,
  lastEnd,
  load,
  markEnded,
  nextHoldersDeadline,
  save,
  setGate,
} from "../manyHolders/durableHolders.js";
import type { AnsweredWrite } from "../../store/types.js";
import {
  type FlowAcquireInput,
  type FlowAcquireResult,
  type FlowBusyReason,
  type FlowGrant,
  type FlowLimit,
  type FlowOps,
  type FlowQueuedHolder,
  type FlowReleaseResult,
  type FlowState,
  limitOfText,
  limitText,
  mismatch,
} from "./types.js";

/**
 * The flow limit on the Durable store, the same rules as lua/flow/*.lua: each
 * function runs synchronously on the lock object's storage (atomic like a
 * script); `now` is the object's clock.
 */

interface FlowHolder extends HolderLease {
  /** The limit it was granted under (limitText). */
  lim: string;
  /** When it was granted: its start. */
  st: number;
}

/** The grant times in the window of the limit they were counted under, oldest first. */
interface Starts {
  limit: string;
  at: number[];
}

const STARTS = "flow:starts";

type FlowSet = HolderSet<FlowHolder>;

/** The limit in force (its holders', else its window's starts'), and the starts in the window ending now. */
function limitInForce(kv: SyncKvStorage, set: FlowSet, now: number): { inForce?: string; at: number[] } {
  const held = Object.values(set.holders)[0]?.lim;
  const stored = kv.get<Starts>(STARTS);
  const perMs = stored ? (limitOfText(stored.limit).rate?.perMs ?? 0) : 0;
  const at = stored ? stored.at.filter((t) => t > now - perMs) : [];
  const inForce = held ?? (at.length ? stored?.limit : undefined);
  return { inForce, at: inForce !== undefined && inForce === stored?.limit ? at : [] };
}

function saveStarts(kv: SyncKvStorage, limit: string | undefined, at: number[]): void {
  if (limit !== undefined && at.length) kv.put<Starts>(STARTS, { limit, at });
  else kv.delete(STARTS);
}

/** When this limit admits a start, if not now: a slot frees (all held) and the window admits one (its starts used up). */
function blocked(set: FlowSet, at: number[], lim: FlowLimit): { until: number; reason: FlowBusyReason } | undefined {
  const held = Object.keys(set.holders).length;
  const slotAt = lim.concurrency !== undefined && held >= lim.concurrency ? firstEnd(set) : undefined;
  const windowAt = lim.rate && at.length >= lim.rate.count ? at[at.length - lim.rate.count] + lim.rate.perMs : undefined;
  if (slotAt === undefined && windowAt === undefined) return undefined;
  const reason = windowAt !== undefined && (slotAt === undefined || windowAt > slotAt) ? "rate" : "concurrency";
  return { until: Math.max(slotAt ?? 0, windowAt ?? 0), reason };
}

function grantOf(name: string, token: string, h: FlowHolder, set: FlowSet, at: number[], lim: FlowLimit): FlowGrant {
  const held = Object.keys(set.holders).length;
  return { name, token, fence: h.fence, ttlMs: h.ttl, expiresAt: h.exp, startedAt: h.st, held, starts: lim.rate ? at.length : null };
}

function newHolder(kv: SyncKvStorage, now: number, w: { ttlMs: number; watch: boolean; holder?: string }, lim: string): FlowHolder {
  return {
    ttl: w.ttlMs,
    exp: now + w.ttlMs,
    fence: issueFence(kv, FENCE, now),
    watch: w.watch,
    lim,
    st: now,
    ...(w.holder ? { holder: w.holder } : {}),
  };
}

function acquire(kv: SyncKvStorage, now: number, name: string, input: FlowAcquireInput): FlowAcquireResult {
  const set = load<FlowHolder>(kv, now);
  const want = limitText(input);
  const { inForce, at } = limitInForce(kv, set, now);
  const mine = set.holders[input.token];
  // A retry of this very acquire finds its own token: its client is alive, and no second start is counted.
  if (mine) {
    if (mine.pickupBy !== undefined) {
      const { pickupBy: _, ...picked } = mine;
      set.holders[input.token] = picked;
      save(kv, set);
    }
    return { status: "granted", grant: grantOf(name, input.token, mine, set, at, input) };
  }
  if (inForce !== undefined && inForce !== want) return { status: "limit_mismatch", limit: limitOfText(inForce) };
  const stop = blocked(set, at, input);
  if (stop) {
    const current = stop.reason === "concurrency" ? firstInWay(set) : undefined;
    return { status: "busy", retryAfterMs: Math.max(stop.until - now, 1), queued: false, reason: stop.reason, ...(current ? { current } : {}) };
  }
  if (gateExists(kv, now)) return { status: "busy", retryAfterMs: 100, queued: true, reason: "line" };
  const h = newHolder(kv, now, input, want);
  set.holders[input.token] = h;
  save(kv, set);
  if (input.rate) at.push(now);
  saveStarts(kv, input.rate ? want : undefined, at);
  return { status: "granted", grant: grantOf(name, input.token, h, set, at, input) };
}

function admit(kv: SyncKvStorage, now: number, name: string, waiters: FlowQueuedHolder[], more: boolean): ReturnType<typeof admitted> {
  const set = load<FlowHolder>(kv, now);
  let { inForce, at } = limitInForce(kv, set, now);
  const granted: FlowGrant[] = [];
  const refused: Array<{ token: string; code: string; message: string }> = [];
  let stop: ReturnType<typeof blocked>;
  for (const w of waiters) {
    const mine = set.holders[w.token];
    if (mine) {
      // Granted by a step whose answer was lost: answered again (see lua/flow/admit.lua).
      if (w.markPickup) set.holders[w.token] = { ...mine, exp: now + mine.ttl, lastTtl: mine.ttl, pickupBy: now + PICKUP_MS };
      granted.push(grantOf(name, w.token, set.holders[w.token], set, at, w));
      continue;
    }
    const want = limitText(w);
    if (inForce !== undefined && inForce !== want) {
      refused.push({ token: w.token, ...mismatch(limitOfText(inForce)) });
      continue;
    }
    stop = blocked(set, at, w);
    if (stop) {
      setGate(kv, w.token, Math.max(lastEnd(set) ?? now, stop.until) + REGISTRATION_GRACE_MS);
      break;
    }
    const h = newHolder(kv, now, w, want);
    if (w.markPickup) h.pickupBy = now + PICKUP_MS;
    set.holders[w.token] = h;
    inForce = want;
    if (w.rate) at = [...at, now];
    granted.push(grantOf(name, w.token, h, set, at, w));
  }
  save(kv, set);
  if (inForce !== undefined && limitOfText(inForce).rate) saveStarts(kv, inForce, at);
  if (stop) return admitted(granted, refused, { retryAfterMs: Math.max(stop.until - now, 1), reason: stop.reason });
  if (more) setGate(kv, "", now + REGISTRATION_GRACE_MS);
  else dropGate(kv);
  return admitted(granted, refused);
}

const admitted = (
  granted: FlowGrant[],
  refused: Array<{ token: string; code: string; message: string }>,
  left?: { retryAfterMs: number; reason: FlowBusyReason },
) => ({ granted, refused, ...left });

function release(kv: SyncKvStorage, now: number, input: { token: string } & AnsweredWrite): FlowReleaseResult {
  const seen = recall<FlowReleaseResult>(kv, input, now);
  if (seen) return seen;
  const set = load<FlowHolder>(kv, now);
  const mine = set.holders[input.token];
  if (!mine) return { status: "lost" };
  delete set.holders[input.token];
  if (mine.watch) markEnded(kv, input.token, now);
  save(kv, set);
  const r: FlowReleaseResult = { status: "ok", held: Object.keys(set.holders).length, watched: mine.watch, waiters: gateExists(kv, now) };
  return remember(kv, input, r, now + REQUEST_MEMORY_MS);
}

function inspect(kv: SyncKvStorage, now: number): FlowState {
  const set = load<FlowHolder>(kv, now);
  const { inForce, at } = limitInForce(kv, set, now);
  const limit = inForce === undefined ? null : limitOfText(inForce);
  const rate = limit?.rate;
  return {
    limit,
    held: Object.keys(set.holders).length,
    holderLabels: labelsOf(set),
    expiresAt: firstEnd(set) ?? null,
    starts: rate ? at.length : null,
    nextStartAt: rate && at.length >= rate.count ? at[at.length - rate.count] + rate.perMs : null,
  };
}

/** When this object next has something to clean up: its holders', or its window's last start leaving it. */
export function nextFlowDeadline(kv: SyncKvStorage, now: number): number | undefined {
  const stored = kv.get<Starts>(STARTS);
  const startsEnd = stored?.at.length ? stored.at[stored.at.length - 1] + (limitOfText(stored.limit).rate?.perMs ?? 0) : undefined;
  if (startsEnd !== undefined && startsEnd <= now) kv.delete(STARTS);
  const times = [nextHoldersDeadline(kv, now), startsEnd !== undefined && startsEnd > now ? startsEnd : undefined];
  const kept = times.filter((t): t is number => t !== undefined);
  return kept.length ? Math.min(...kept) : undefined;
}

/** The flow limit's operations on one lock object's storage, by the object's clock (the Durable store). */
export function durableFlow(kv: SyncKvStorage): FlowOps {
  return {
    ...durableHolderOps(kv),
    acquire: async (ref, input) => acquire(kv, Date.now(), ref.name, input),
    admit: async (ref, waiters, more) => admit(kv, Date.now(), ref.name, waiters, more),
    release: async (_ref, input) => release(kv, Date.now(), input),
    inspect: async () => inspect(kv, Date.now()),
  };
}
