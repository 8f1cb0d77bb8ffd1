import { PICKUP_MS, REGISTRATION_GRACE_MS, REQUEST_MEMORY_MS } from "../../limits.js";
import { recall, remember } from "../../store/durable/answerMemory.js";
import { earliest, fenceKeptUntil, issueFence, lastFence, leaseEnd, live } from "../../store/durable/records.js";
import type { WithdrawReason } from "../../store/types.js";
import type { WatchState } from "../../store/types.js";
import type {
  MutexAcquireInput,
  MutexAcquireResult,
  MutexGrant,
  MutexHeartbeatResult,
  MutexReleaseInput,
  MutexReleaseResult,
  MutexState,
  MutexWithdrawResult,
  MutexOps,
} from "./types.js";

/**
 * The mutex on the Durable store, the same rules as lua/mutex/*.lua: each function
 * runs synchronously on the lock object's storage, so it is atomic like a
 * script. `now` is the object's clock.
 */

export interface Lease {
  owner: string;
  count: number;
  fence: number;
  ttl: number;
  /** A heartbeat's ttl: the lease's length since (see leaseEnd). */
  lastTtl?: number;
  expiresAt: number;
  watch: boolean;
  /** Set on a grant to a queued waiter until its holder shows a sign of life (see withdraw). */
  pickupBy?: number;
  /** The holder's label, when it gave one. */
  holder?: string;
  /** Its lock-delay: nobody is granted the lock for this long after it lapses. */
  lockDelay?: number;
  /** The request id of its last inner release (one level of a re-entered hold), as lua/mutex/release.lua's field rl. */
  rl?: string;
}

/** The lock object's head waiter: a release hands the lock straight to it. */
interface Next {
  /** "": more waiters queue, none registered yet (try-locks stay out). */
  token: string;
  more: boolean;
  ttl: number;
  watch: boolean;
  until: number;
  holder?: string;
  lockDelay?: number;
}

/** A lapsed lease's lock-delay: the lock is granted to nobody until `until`. */
interface Delay {
  until: number;
}

export const LEASE = "mutex";
const FENCE = "mutex:fence";
const NEXT = "mutex:next";
const DELAY = "mutex:delay";

/** The lease while it lives, its end as it stands on the object's clock (stored moved when a clock went back). */
export function liveLease(kv: SyncKvStorage, now: number): Lease | undefined {
  let end = 0; // where the lease ends as it stands (leaseEnd), worked out once by the liveness check
  const lease = live<Lease>(kv, LEASE, now, (l) => {
    end = leaseEnd(l.expiresAt, l.lastTtl ?? l.ttl, now);
    return end;
  });
  if (!lease || end === lease.expiresAt) return lease;
  const moved = { ...lease, expiresAt: end };
  kv.put<Lease>(LEASE, moved);
  return moved;
}
const liveNext = (kv: SyncKvStorage, now: number) => live<Next>(kv, NEXT, now, (n) => n.until);
const liveDelay = (kv: SyncKvStorage, now: number) => live<Delay>(kv, DELAY, now, (d) => d.until);

/** A lease's lock-delay record follows its end (the rule of set_lock_delay in lua/prelude.lua); none without one. */
function keepDelay(kv: SyncKvStorage, lease: Lease): void {
  if (lease.lockDelay) kv.put<Delay>(DELAY, { until: lease.expiresAt + lease.lockDelay });
  else kv.delete(DELAY);
}

/** A fresh lease with the next fence; a grant to a queued waiter is marked until picked up. */
function newLease(
  kv: SyncKvStorage,
  now: number,
  owner: string,
  ttl: number,
  watch: boolean,
  fromQueue: boolean,
  holder?: string,
  lockDelay?: number,
): Lease {
  return {
    owner,
    count: 1,
    fence: issueFence(kv, FENCE, now),
    ttl,
    expiresAt: now + ttl,
    watch,
    ...(fromQueue ? { pickupBy: now + PICKUP_MS } : {}),
    ...(holder ? { holder } : {}),
    ...(lockDelay ? { lockDelay } : {}),
  };
}

function grantOfLease(name: string, lease: Lease): MutexGrant {
  return { name, token: lease.owner, fence: lease.fence, ttlMs: lease.ttl, expiresAt: lease.expiresAt, count: lease.count };
}

function acquire(kv: SyncKvStorage, now: number, name: string, input: MutexAcquireInput): MutexAcquireResult {
  const lease = liveLease(kv, now);
  if (input.mode === "reenter") {
    // The lease first: a retry that comes after it lapsed (and another took the lock) is lost, never its old grant.
    if (lease?.owner !== input.token) return { status: "lost" };
    const seen = recall<MutexAcquireResult>(kv, input, now);
    if (seen) return seen;
    const next: Lease = {
      ...lease,
      count: lease.count + 1,
      ttl: input.ttlMs,
      expiresAt: now + input.ttlMs,
      watch: lease.watch || input.watch,
      ...(input.holder ? { holder: input.holder } : {}),
    };
    delete next.lastTtl;
    delete next.pickupBy; // the holder is alive: its grant is picked up
    // A re-entry's lock-delay is the lease's from now on (none: none).
    if (input.lockDelayMs) next.lockDelay = input.lockDelayMs;
    else delete next.lockDelay;
    kv.put(LEASE, next);
    keepDelay(kv, next);
    return remember<MutexAcquireResult>(kv, input, { status: "granted", grant: grantOfLease(name, next) }, now + REQUEST_MEMORY_MS);
  }
  // A retry of a grant (or the object asking again for its head) finds its own token.
  if (lease?.owner === input.token) {
    if (input.mode === "new" && lease.pickupBy !== undefined) {
      // The client's retry of an acquire that was granted from the line: it is alive, so the grant is picked up.
      const { pickupBy: _, ...picked } = lease;
      kv.put(LEASE, picked);
      return { status: "granted", grant: grantOfLease(name, picked) };
    }
    if (input.mode !== "queue" || input.markPickup !== true) return { status: "granted", grant: grantOfLease(name, lease) };
    // A grant the object learns of only now (a handoff, or its own step whose answer was lost): the whole lease
    // from now, as its answer will say, marked for pickup (even if granted unmarked: nobody has its token yet).
    const renewed: Lease = { ...lease, expiresAt: now + lease.ttl, pickupBy: now + PICKUP_MS };
    delete renewed.lastTtl;
    kv.put(LEASE, renewed);
    return { status: "granted", grant: grantOfLease(name, renewed) };
  }
  if (lease) {
    if (input.mode === "queue") {
      kv.put<Next>(NEXT, {
        token: input.token,
        more: input.more ?? false,
        ttl: input.ttlMs,
        watch: input.watch,
        // Past the holder's end and its lock-delay, if it lapses: the object renews it when it wakes.
        until: lease.expiresAt + (lease.lockDelay ?? 0) + REGISTRATION_GRACE_MS,
        ...(input.holder ? { holder: input.holder } : {}),
        ...(input.lockDelayMs ? { lockDelay: input.lockDelayMs } : {}),
      });
      if (!lease.watch) kv.put<Lease>(LEASE, { ...lease, watch: true });
    }
    return {
      status: "busy",
      retryAfterMs: Math.max(lease.expiresAt - now, 1),
      queued: false,
      current: { holder: lease.holder ?? null, expiresAt: lease.expiresAt },
    };
  }
  // Free. A lapsed lease's lock-delay holds everyone off, waiters included.
  const delay = liveDelay(kv, now);
  if (delay) return { status: "busy", retryAfterMs: Math.max(delay.until - now, 1), queued: false, delayedUntil: delay.until };
  if (input.mode === "new" && liveNext(kv, now)) return { status: "busy", retryAfterMs: 100, queued: true };

  const granted = newLease(
    kv,
    now,
    input.token,
    input.ttlMs,
    input.watch,
    input.mode === "queue" && input.markPickup === true,
    input.holder,
    input.lockDelayMs,
  );
  kv.put(LEASE, granted);
  if (granted.lockDelay) keepDelay(kv, granted);
  if (input.mode === "queue") kv.delete(NEXT);
  return { status: "granted", grant: grantOfLease(name, granted) };
}

function heartbeat(kv: SyncKvStorage, now: number, input: { token: string; ttlMs?: number }): MutexHeartbeatResult {
  const lease = liveLease(kv, now);
  if (lease?.owner !== input.token) return { status: "lost" };
  const ttl = input.ttlMs ?? lease.ttl;
  const next: Lease = { ...lease, expiresAt: now + ttl, lastTtl: ttl };
  delete next.pickupBy;
  kv.put<Lease>(LEASE, next);
  if (next.lockDelay) keepDelay(kv, next);
  // The registered waiter is left alone: the lock object renews it (see lua/mutex/heartbeat.lua).
  return { status: "ok", expiresAt: now + ttl, ttlMs: ttl, fence: lease.fence };
}

function release(kv: SyncKvStorage, now: number, name: string, input: MutexReleaseInput): MutexReleaseResult {
  const { force } = input;
  const lease = liveLease(kv, now);
  // The answers are read only when this may be a retry, as lua/mutex/release.lua does: a forced release, a lease
  // that is not (or no longer) this token's (a retried final release finds it gone), or one that took inner
  // releases (rl set): a late copy of any of them replays, not only of the last, so it drops no second level.
  // The usual release holds its own lease, never re-entered: nothing to read.
  if (force || lease?.owner !== input.token || lease.rl !== undefined) {
    const seen = recall<MutexReleaseResult>(kv, input, now);
    if (seen) return seen;
  }
  if (!lease || (force ? force.fence !== undefined && force.fence !== lease.fence : lease.owner !== input.token)) return { status: "lost" };
  const label = force ? { holder: lease.holder ?? null } : {};
  const answer = (r: MutexReleaseResult) => remember(kv, input, { ...r, ...label }, now + REQUEST_MEMORY_MS);
  if (lease.count > 1 && !force) {
    kv.put<Lease>(LEASE, { ...lease, count: lease.count - 1, rl: input.requestId });
    return answer({ status: "ok", released: false, count: lease.count - 1, fence: lease.fence, watched: lease.watch });
  }
  kv.delete(LEASE);
  kv.delete(DELAY); // a release has no lock-delay
  const waiting = liveNext(kv, now);
  if (!waiting?.token) return answer({ status: "ok", released: true, count: 0, fence: lease.fence, watched: lease.watch });

  const handed = newLease(kv, now, waiting.token, waiting.ttl, waiting.watch, true, waiting.holder, waiting.lockDelay);
  kv.put(LEASE, handed);
  if (handed.lockDelay) keepDelay(kv, handed);
  if (waiting.more) kv.put<Next>(NEXT, { token: "", more: true, ttl: 0, watch: false, until: now + REGISTRATION_GRACE_MS });
  else kv.delete(NEXT);
  return answer({ status: "ok", released: true, count: 0, fence: lease.fence, watched: true, handedTo: grantOfLease(name, handed) });
}

function withdraw(kv: SyncKvStorage, now: number, input: { token: string; reason: WithdrawReason }): MutexWithdrawResult {
  if (input.token && liveNext(kv, now)?.token === input.token) {
    kv.delete(NEXT);
    return { status: "unregistered" };
  }
  const lease = liveLease(kv, now);
  // A waiter that left before any grant reached it: nobody has its token, so its grant goes whatever its mark.
  if (lease?.owner === input.token && (input.reason === "left" || lease.pickupBy !== undefined)) {
    kv.delete(LEASE);
    kv.delete(DELAY); // taken back, not lapsed: no lock-delay
    return { status: "revoked", fence: lease.fence };
  }
  return { status: "none" };
}

function inspect(kv: SyncKvStorage, now: number): MutexState {
  const lease = liveLease(kv, now);
  if (!lease) {
    const delayedUntil = liveDelay(kv, now)?.until ?? null;
    return { held: false, fence: lastFence(kv, FENCE, now) ?? null, count: 0, ttlMs: 0, expiresAt: null, holder: null, delayedUntil };
  }
  return {
    held: true,
    fence: lease.fence,
    count: lease.count,
    ttlMs: lease.expiresAt - now,
    expiresAt: lease.expiresAt,
    holder: lease.holder ?? null,
    delayedUntil: null,
  };
}

/** The lease of this fence, for its watch. (Releases here end their watch in the same call.) */
function watch(kv: SyncKvStorage, now: number, fence: number): WatchState {
  const lease = liveLease(kv, now);
  if (lease?.fence === fence) return { state: "held", remainingMs: lease.expiresAt - now, expiresAt: lease.expiresAt };
  return { state: "lapsed" };
}

/** When this object next has something of the mutex to clean up (lease end, registration, fence horizon). */
export function nextMutexDeadline(kv: SyncKvStorage, now: number): number | undefined {
  const held = earliest(liveLease(kv, now)?.expiresAt, liveNext(kv, now)?.until);
  return earliest(earliest(held, liveDelay(kv, now)?.until), fenceKeptUntil(kv, FENCE, now));
}

/** The mutex's operations on one lock object's storage, by the object's clock (the Durable store). */
export function durableMutex(kv: SyncKvStorage): MutexOps {
  return {
    acquire: async (ref, input) => acquire(kv, Date.now(), ref.name, input),
    heartbeat: async (_ref, input) => heartbeat(kv, Date.now(), input),
    release: async (ref, input) => release(kv, Date.now(), ref.name, input),
    withdraw: async (_ref, input) => withdraw(kv, Date.now(), input),
    inspect: async () => inspect(kv, Date.now()),
    watch: async (_ref, { fence }) => watch(kv, Date.now(), fence),
  };
}
