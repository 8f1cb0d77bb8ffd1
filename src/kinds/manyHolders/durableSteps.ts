import { PICKUP_MS, REGISTRATION_GRACE_MS, REQUEST_MEMORY_MS } from "../../limits.js";
import { recall, remember } from "../../store/durable/answerMemory.js";
import type { AnsweredWrite } from "../../store/types.js";
import { dropGate, gateExists, type HolderLease, type HolderSet, lastEnd, load, markEnded, save, setGate } from "./durableHolders.js";
import type { HolderBusy } from "./types.js";

/**
 * The steps the many-holder kinds' own rules on the Durable store take alike
 * (src/kinds/<kind>/durable<Kind>.ts), each the same step as in their
 * scripts (lua/<kind>/*.lua): a new holder's lease, a retry's pickup, a lost
 * step's grant answered again, the gate a step leaves, a whole release.
 * Synchronous on the lock object's storage, `now` the object's clock.
 */

/** A new holder's lease from now with this fence; one the line granted (markPickup) must be picked up. */
export function newLease(now: number, w: { ttlMs: number; watch: boolean; holder?: string; markPickup?: boolean }, fence: number): HolderLease {
  return {
    ttl: w.ttlMs,
    exp: now + w.ttlMs,
    fence,
    watch: w.watch,
    ...(w.holder ? { holder: w.holder } : {}),
    ...(w.markPickup ? { pickupBy: now + PICKUP_MS } : {}),
  };
}

/**
 * A retry of a new holder's acquire finds its own token: its client is alive,
 * so its grant is picked up. Its holder, as the grant answers it.
 */
export function pickedUp<H extends HolderLease>(kv: SyncKvStorage, set: HolderSet<H>, token: string): H {
  const mine = set.holders[token];
  if (mine.pickupBy !== undefined) {
    // A new holder record: the one read is the stored value, read-only (the lock object's KeptKv).
    const { pickupBy: _, ...picked } = mine;
    set.holders[token] = picked as H;
    save(kv, set);
  }
  return mine;
}

/**
 * A waiter that holds already: granted by a step whose answer was lost, it is
 * answered again; if it must be picked up, its lease from now and marked so
 * (even if that step granted it unmarked: nobody has its token yet).
 */
export function grantedAgain<H extends HolderLease>(set: HolderSet<H>, w: { token: string; markPickup: boolean }, now: number): H | undefined {
  const mine = set.holders[w.token];
  if (mine && w.markPickup) set.holders[w.token] = { ...mine, exp: now + mine.ttl, lastTtl: mine.ttl, pickupBy: now + PICKUP_MS };
  return set.holders[w.token];
}

/** Waiters are first (a gate stands): a try is turned away, queued, to look again soon (no barging). */
export function lineFirst(kv: SyncKvStorage, now: number): HolderBusy | undefined {
  return gateExists(kv, now) ? { status: "busy", retryAfterMs: 100, queued: true } : undefined;
}

/**
 * A step stopped at this waiter: it keeps the gate (try-locks stay out) until
 * every holder's lease has ended, or later if the kind's rule says so (until),
 * and a grace for the lock object to come back.
 */
export function stopInGate<H extends HolderLease>(kv: SyncKvStorage, set: HolderSet<H>, token: string, now: number, until = now): void {
  setGate(kv, token, Math.max(lastEnd(set) ?? now, until) + REGISTRATION_GRACE_MS);
}

/** A step that stopped at no waiter: with more behind it (more), try-locks stay out until the next step; with none, the gate goes. */
export function gateAfterStep(kv: SyncKvStorage, now: number, more: boolean): void {
  if (more) setGate(kv, "", now + REGISTRATION_GRACE_MS);
  else dropGate(kv);
}

/**
 * A release of all of the token's hold (the semaphore's permits, a flow
 * slot): a retry answered as the first time; the holder out and its watch
 * marked ended; ok with the kind's fields of it, whether it was watched, and
 * whether anyone waits in line.
 */
export function releaseWhole<H extends HolderLease, F extends object>(
  kv: SyncKvStorage,
  now: number,
  input: { token: string } & AnsweredWrite,
  fields: (released: H, left: HolderSet<H>) => F,
): ({ status: "ok"; watched: boolean; waiters: boolean } & F) | { status: "lost" } {
  type Result = ({ status: "ok"; watched: boolean; waiters: boolean } & F) | { status: "lost" };
  const seen = recall<Result>(kv, input, now);
  if (seen) return seen;
  const set = load<H>(kv, now);
  const mine = set.holders[input.token];
  if (!mine) return { status: "lost" };
  delete set.holders[input.token];
  if (mine.watch) markEnded(kv, input.token, now);
  save(kv, set);
  const r: Result = { status: "ok", ...fields(mine, set), watched: mine.watch, waiters: gateExists(kv, now) };
  return remember(kv, input, r, now + REQUEST_MEMORY_MS);
}
