import { issueFence } from "../../store/durable/records.js";
import {
  durableHolderKind,
  FENCE,
  firstEnd,
  firstInWay,
  type HolderLease,
  type HolderSet,
  labelsOf,
  load,
  nextHoldersDeadline,
  save,
} from "../manyHolders/durableHolders.js";
import { gateAfterStep, grantedAgain, lineFirst, newLease, pickedUp, releaseWhole, stopInGate } from "../manyHolders/durableSteps.js";
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

function newHolder(kv: SyncKvStorage, now: number, w: FlowAcquireInput & { markPickup?: boolean }, lim: string): FlowHolder {
  return { lim, st: now, ...newLease(now, w, issueFence(kv, FENCE, now)) };
}

function acquire(kv: SyncKvStorage, now: number, name: string, input: FlowAcquireInput): FlowAcquireResult {
  const set = load<FlowHolder>(kv, now);
  const want = limitText(input);
  const { inForce, at } = limitInForce(kv, set, now);
  // A retry of this very acquire finds its own token: no second start is counted.
  if (set.holders[input.token]) return { status: "granted", grant: grantOf(name, input.token, pickedUp(kv, set, input.token), set, at, input) };
  if (inForce !== undefined && inForce !== want) return { status: "limit_mismatch", limit: limitOfText(inForce) };
  const stop = blocked(set, at, input);
  if (stop) {
    const current = stop.reason === "concurrency" ? firstInWay(set) : undefined;
    return { status: "busy", retryAfterMs: Math.max(stop.until - now, 1), queued: false, reason: stop.reason, ...(current ? { current } : {}) };
  }
  const waiting = lineFirst(kv, now);
  if (waiting) return { ...waiting, reason: "line" };
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
    // Granted by a step whose answer was lost: answered again (see lua/flow/admit.lua).
    const again = grantedAgain(set, w, now);
    if (again) {
      granted.push(grantOf(name, w.token, again, set, at, w));
      continue;
    }
    const want = limitText(w);
    if (inForce !== undefined && inForce !== want) {
      refused.push({ token: w.token, ...mismatch(limitOfText(inForce)) });
      continue;
    }
    stop = blocked(set, at, w);
    if (stop) {
      stopInGate(kv, set, w.token, now, stop.until);
      break;
    }
    const h = newHolder(kv, now, w, want);
    set.holders[w.token] = h;
    inForce = want;
    if (w.rate) at = [...at, now];
    granted.push(grantOf(name, w.token, h, set, at, w));
  }
  save(kv, set);
  if (inForce !== undefined && limitOfText(inForce).rate) saveStarts(kv, inForce, at);
  if (stop) return admitted(granted, refused, { retryAfterMs: Math.max(stop.until - now, 1), reason: stop.reason });
  gateAfterStep(kv, now, more);
  return admitted(granted, refused);
}

const admitted = (
  granted: FlowGrant[],
  refused: Array<{ token: string; code: string; message: string }>,
  left?: { retryAfterMs: number; reason: FlowBusyReason },
) => ({ granted, refused, ...left });

function release(kv: SyncKvStorage, now: number, input: { token: string } & AnsweredWrite): FlowReleaseResult {
  return releaseWhole<FlowHolder, { held: number }>(kv, now, input, (_, left) => ({ held: Object.keys(left.holders).length }));
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
  return durableHolderKind(kv, { acquire, admit, release, inspect });
}
