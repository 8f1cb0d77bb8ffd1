import { FENCE_KEEP_MS, REQUEST_MEMORY_MS } from "../../limits";
import type { MutexAcquireInput, MutexAcquireResult, MutexHeartbeatResult, MutexReleaseResult, MutexState } from "../types";
import { recall, remember } from "./requestMemory";

/**
 * The mutex of one Durable Object, the same rules as lua/mutex_*.lua: each
 * function runs synchronously on the object's storage, so it is atomic like a
 * script. `now` is the object's clock.
 */

interface Lease {
  owner: string;
  count: number;
  fence: number;
  ttl: number;
  expiresAt: number;
  watch: boolean;
}

interface FenceRecord {
  last: number;
  keepUntil: number;
}

const LEASE = "mutex";
const FENCE = "mutex:fence";

/** The live lease, or undefined; a lapsed one is deleted on sight. */
export function liveLease(kv: SyncKvStorage, now: number): Lease | undefined {
  const lease = kv.get<Lease>(LEASE);
  if (lease && lease.expiresAt <= now) {
    kv.delete(LEASE);
    return undefined;
  }
  return lease;
}

export function lastFence(kv: SyncKvStorage, now: number): FenceRecord | undefined {
  const f = kv.get<FenceRecord>(FENCE);
  if (f && f.keepUntil <= now) {
    kv.delete(FENCE);
    return undefined;
  }
  return f;
}

export function acquire(kv: SyncKvStorage, now: number, name: string, input: MutexAcquireInput): MutexAcquireResult {
  const seen = recall<MutexAcquireResult>(kv, input.requestId, now);
  if (seen) return seen;
  const answer = (r: MutexAcquireResult) => remember(kv, input.requestId, r, now + REQUEST_MEMORY_MS);

  const lease = liveLease(kv, now);
  if (input.reenter) {
    if (!lease || lease.owner !== input.token) return answer({ status: "lost" });
    const next: Lease = {
      ...lease,
      count: lease.count + 1,
      ttl: input.ttlMs,
      expiresAt: now + input.ttlMs,
      watch: lease.watch || input.watch,
    };
    kv.put(LEASE, next);
    return answer({ status: "granted", grant: grantOf(name, next) });
  }
  if (lease) {
    if (input.watch && !lease.watch) kv.put(LEASE, { ...lease, watch: true });
    return answer({ status: "busy", retryAfterMs: lease.expiresAt - now, expiresAt: lease.expiresAt });
  }
  const fence = Math.max((lastFence(kv, now)?.last ?? 0) + 1, now * 1000);
  kv.put<FenceRecord>(FENCE, { last: fence, keepUntil: now + FENCE_KEEP_MS });
  const next: Lease = {
    owner: input.token,
    count: 1,
    fence,
    ttl: input.ttlMs,
    expiresAt: now + input.ttlMs,
    watch: input.watch,
  };
  kv.put(LEASE, next);
  return answer({ status: "granted", grant: grantOf(name, next) });
}

export function heartbeat(kv: SyncKvStorage, now: number, input: { token: string; ttlMs?: number }): MutexHeartbeatResult {
  const lease = liveLease(kv, now);
  if (!lease || lease.owner !== input.token) return { status: "lost" };
  const ttl = input.ttlMs ?? lease.ttl;
  kv.put<Lease>(LEASE, { ...lease, expiresAt: now + ttl });
  return { status: "ok", expiresAt: now + ttl, ttlMs: ttl, fence: lease.fence, watched: lease.watch };
}

export function release(kv: SyncKvStorage, now: number, input: { token: string; requestId: string }): MutexReleaseResult {
  const seen = recall<MutexReleaseResult>(kv, input.requestId, now);
  if (seen) return seen;
  const answer = (r: MutexReleaseResult) => remember(kv, input.requestId, r, now + REQUEST_MEMORY_MS);

  const lease = liveLease(kv, now);
  if (!lease || lease.owner !== input.token) return answer({ status: "lost" });
  if (lease.count <= 1) {
    kv.delete(LEASE);
    return answer({ status: "ok", released: true, count: 0, fence: lease.fence, watched: lease.watch });
  }
  kv.put<Lease>(LEASE, { ...lease, count: lease.count - 1 });
  return answer({ status: "ok", released: false, count: lease.count - 1, fence: lease.fence, watched: lease.watch });
}

export function inspect(kv: SyncKvStorage, now: number): MutexState {
  const lease = liveLease(kv, now);
  if (!lease) return { held: false, fence: lastFence(kv, now)?.last ?? null, count: 0, ttlMs: 0, expiresAt: null };
  return { held: true, fence: lease.fence, count: lease.count, ttlMs: lease.expiresAt - now, expiresAt: lease.expiresAt };
}

/** When this object next has something to clean up (lease end, fence horizon). */
export function nextMutexDeadline(kv: SyncKvStorage, now: number): number | undefined {
  const times = [liveLease(kv, now)?.expiresAt, lastFence(kv, now)?.keepUntil].filter((t): t is number => t !== undefined);
  return times.length ? Math.min(...times) : undefined;
}

function grantOf(name: string, lease: Lease) {
  return {
    name,
    token: lease.owner,
    fence: lease.fence,
    ttlMs: lease.ttl,
    expiresAt: lease.expiresAt,
    count: lease.count,
  };
}
