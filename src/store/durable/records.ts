import { InternalError } from "../../errors.js";
import { FENCE_KEEP_MS } from "../../limits.js";

/**
 * Stored records of the Durable store, as the kinds keep them: each with a
 * time past which it is gone (what PEXPIREAT is to the Redis scripts), and
 * the per-name fence that never goes backwards.
 */

/**
 * A record while it lives; one past its time is deleted on sight. A record of
 * the wrong shape is a bug, not state: it is reported, never read as held or
 * free.
 */
export function live<T>(kv: SyncKvStorage, key: string, now: number, until: (v: T) => number): T | undefined {
  const v = kv.get<T>(key);
  if (v === undefined) return undefined;
  if (typeof v !== "object" || v === null || typeof until(v) !== "number") {
    throw new InternalError(`the stored ${key} record is not one this code wrote`);
  }
  if (until(v) <= now) {
    kv.delete(key);
    return undefined;
  }
  return v;
}

/** The earlier of two times, either of which may be missing: a deadline's arithmetic on every write, no arrays made. */
export function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || (b !== undefined && b < a) ? b : a;
}

/**
 * A lease's end as it stands on a clock that may have gone back, the rule of
 * lua/prelude.lua's lease_end: a time earlier than the lease's own last write
 * (its end minus its length) is a step back, and the lease then ends `len`
 * from now at the latest, so it outlives its TTL by at most the time from its
 * last write to the first call after the step, never by the whole step
 * (docs/guarantees.md, promise 6). Callers store the end they get.
 */
export function leaseEnd(end: number, len: number, now: number): number {
  return now < end - len ? now + len : end;
}

interface FenceRecord {
  last: number;
  keepUntil: number;
}

/** The last fence issued under `key`, while it is kept. */
export function lastFence(kv: SyncKvStorage, key: string, now: number): number | undefined {
  return live<FenceRecord>(kv, key, now, (f) => f.keepUntil)?.last;
}

/** When the kept fence may be forgotten (a clean-up time), if one is kept. */
export function fenceKeptUntil(kv: SyncKvStorage, key: string, now: number): number | undefined {
  return live<FenceRecord>(kv, key, now, (f) => f.keepUntil)?.keepUntil;
}

/**
 * The next fence: max(last + 1, now in microseconds), as the scripts do, so it
 * grows even after the kept value is forgotten.
 */
export function issueFence(kv: SyncKvStorage, key: string, now: number): number {
  const last = lastFence(kv, key, now) ?? 0;
  // Past 2^53 - 1 the next fence is not representable exactly (it would repeat): fail, change nothing.
  if (!Number.isSafeInteger(last) || last >= Number.MAX_SAFE_INTEGER) {
    throw new InternalError(`the stored fence ${String(last).slice(0, 40)} has no next fence below 2^53`);
  }
  const fence = Math.max(last + 1, now * 1000);
  kv.put<FenceRecord>(key, { last: fence, keepUntil: now + FENCE_KEEP_MS });
  return fence;
}
