import { REQUEST_MEMORY_MS } from "../../limits.js";
import type {
  IdempotencyBeginInput,
  IdempotencyBeginResult,
  IdempotencyCompleteResult,
  IdempotencyFailResult,
  IdempotencyHeartbeatResult,
  IdempotencyOps,
  IdempotencyState,
} from "./types.js";
import type { WatchState } from "../../store/types.js";
import { recall, remember } from "../../store/durable/answerMemory.js";
import { fenceKeptUntil, issueFence, leaseEnd, live } from "../../store/durable/records.js";
import type { AnsweredWrite } from "../../store/types.js";

/**
 * An idempotency key on the Durable store, the same rules as lua/idempotency/*.lua: each function runs synchronously on the object's
 * storage, so it is atomic like a script. `now` is the object's clock;
 * `keepUntil` plays the part of the Redis key's PEXPIREAT.
 */

interface Started {
  state: "started";
  token: string;
  fence: number;
  fp: string;
  deadline: number;
  ttl: number;
  /** A heartbeat's ttl: the deadline's length since (see leaseEnd). */
  lastTtl?: number;
  retain: number;
  /** The owner's label, when it gave one. */
  holder?: string;
  keepUntil: number;
}

interface Completed {
  state: "completed";
  fence: number;
  fp: string;
  /** JSON text, as the Redis store keeps it. */
  response: string;
  completedAt: number;
  keepUntil: number;
}

type IdemRecord = Started | Completed;

const RECORD = "idem";
const FENCE = "idem:fence";

/**
 * The record while it is kept, or undefined; one past its keep time is
 * deleted on sight. A start's deadline as it stands on the object's clock
 * (stored moved when the clock went back; see leaseEnd).
 */
function liveRecord(kv: SyncKvStorage, now: number): IdemRecord | undefined {
  const rec = live<IdemRecord>(kv, RECORD, now, (r) => r.keepUntil);
  if (rec?.state !== "started") return rec;
  const deadline = leaseEnd(rec.deadline, rec.lastTtl ?? rec.ttl, now);
  if (deadline === rec.deadline) return rec;
  const moved: Started = { ...rec, deadline };
  kv.put<IdemRecord>(RECORD, moved);
  return moved;
}

/** The started record of this token, if its deadline has not passed. */
function ownedBy(kv: SyncKvStorage, now: number, token: string): Started | undefined {
  const rec = liveRecord(kv, now);
  return rec?.state === "started" && rec.token === token && rec.deadline > now ? rec : undefined;
}

export function begin(kv: SyncKvStorage, now: number, input: IdempotencyBeginInput): IdempotencyBeginResult {
  // Only a start is remembered: the other answers change nothing, so a retry
  // evaluates them again (see lua/idempotency/begin.lua). The start is replayed
  // only while it stands: one that lapsed or ended may have been taken over.
  const seen = recall<IdempotencyBeginResult>(kv, input, now);
  if (seen?.status === "started" && ownedBy(kv, now, seen.token)) return seen;

  const rec = liveRecord(kv, now);
  const fp = input.fingerprint ?? "";
  if (rec && rec.fp !== "" && fp !== "" && rec.fp !== fp) return { status: "mismatch" };
  if (rec?.state === "completed") {
    return { status: "completed", response: JSON.parse(rec.response), completedAt: rec.completedAt, fence: rec.fence };
  }
  if (rec?.state === "started" && rec.deadline > now) {
    return { status: "in_progress", retryAfterMs: rec.deadline - now, expiresAt: rec.deadline, holder: rec.holder ?? null };
  }

  const fence = issueFence(kv, FENCE, now);
  const next: Started = {
    state: "started",
    token: input.token,
    fence,
    // The first fingerprint sticks: a start without one keeps the vanished owner's.
    fp: fp || rec?.fp || "",
    deadline: now + input.ttlMs,
    ttl: input.ttlMs,
    retain: input.retainMs,
    keepUntil: now + Math.max(input.ttlMs, input.retainMs),
    ...(input.holder ? { holder: input.holder } : {}),
  };
  kv.put<IdemRecord>(RECORD, next);
  return remember<IdempotencyBeginResult>(
    kv,
    input,
    { status: "started", token: next.token, fence, ttlMs: next.ttl, expiresAt: next.deadline },
    now + REQUEST_MEMORY_MS,
  );
}

function heartbeat(kv: SyncKvStorage, now: number, input: { token: string; ttlMs?: number }): IdempotencyHeartbeatResult {
  const rec = ownedBy(kv, now, input.token);
  if (!rec) return { status: "lost" };
  const ttl = input.ttlMs ?? rec.ttl;
  kv.put<IdemRecord>(RECORD, { ...rec, deadline: now + ttl, lastTtl: ttl, keepUntil: Math.max(rec.keepUntil, now + ttl) });
  return { status: "ok", expiresAt: now + ttl, ttlMs: ttl, fence: rec.fence };
}

export function complete(kv: SyncKvStorage, now: number, input: { token: string; responseJson: string } & AnsweredWrite): IdempotencyCompleteResult {
  const seen = recall<IdempotencyCompleteResult>(kv, input, now);
  if (seen) return seen;
  const answer = (r: IdempotencyCompleteResult) => remember(kv, input, r, now + REQUEST_MEMORY_MS);

  const rec = ownedBy(kv, now, input.token);
  if (!rec) return { status: "lost" }; // changes nothing: not remembered
  kv.put<IdemRecord>(RECORD, {
    state: "completed",
    fence: rec.fence,
    fp: rec.fp,
    response: input.responseJson,
    completedAt: now,
    keepUntil: now + rec.retain,
  });
  return answer({ status: "ok", completedAt: now, fence: rec.fence, keptUntil: now + rec.retain });
}

function fail(kv: SyncKvStorage, now: number, input: { token: string } & AnsweredWrite): IdempotencyFailResult {
  const seen = recall<IdempotencyFailResult>(kv, input, now);
  if (seen) return seen;
  const answer = (r: IdempotencyFailResult) => remember(kv, input, r, now + REQUEST_MEMORY_MS);

  const rec = ownedBy(kv, now, input.token);
  if (!rec) return { status: "lost" }; // changes nothing: not remembered
  kv.delete(RECORD);
  return answer({ status: "ok", fence: rec.fence });
}

export function inspect(kv: SyncKvStorage, now: number): IdempotencyState {
  const rec = liveRecord(kv, now);
  if (rec?.state === "completed") {
    return { state: "completed", fence: rec.fence, completedAt: rec.completedAt, response: JSON.parse(rec.response) };
  }
  if (rec?.state === "started" && rec.deadline > now)
    return { state: "started", fence: rec.fence, expiresAt: rec.deadline, holder: rec.holder ?? null };
  return { state: "absent" };
}

/** The start of this fence, for its watch. (Complete and fail here end their watch in the same call.) */
function watch(kv: SyncKvStorage, now: number, fence: number): WatchState {
  const rec = liveRecord(kv, now);
  if (rec?.fence !== fence) return { state: "lapsed" };
  if (rec.state === "completed") return { state: "ended" };
  if (rec.deadline > now) return { state: "held", remainingMs: rec.deadline - now, expiresAt: rec.deadline };
  return { state: "lapsed" };
}

/** When this object next has something to clean up (record keep time, fence horizon). */
export function nextIdempotencyDeadline(kv: SyncKvStorage, now: number): number | undefined {
  const times = [liveRecord(kv, now)?.keepUntil, fenceKeptUntil(kv, FENCE, now)].filter((t): t is number => t !== undefined);
  return times.length ? Math.min(...times) : undefined;
}

/** Idempotency keys' operations on one lock object's storage, by the object's clock (the Durable store). */
export function durableIdempotency(kv: SyncKvStorage): IdempotencyOps {
  return {
    begin: async (_ref, input) => begin(kv, Date.now(), input),
    heartbeat: async (_ref, input) => heartbeat(kv, Date.now(), input),
    complete: async (_ref, input) => complete(kv, Date.now(), input),
    fail: async (_ref, input) => fail(kv, Date.now(), input),
    inspect: async () => inspect(kv, Date.now()),
    // The object that runs this hears every complete and fail in the same call (IdempotencyObjectPart): no mark needed.
    inspectWaiting: async () => inspect(kv, Date.now()),
    watch: async (_ref, { fence }) => watch(kv, Date.now(), fence),
  };
}
