import type { CurrentHolder } from "../../errors.js";
import { ENDED_KEEP_MS, REQUEST_MEMORY_MS } from "../../limits.js";
import { recall, remember } from "../../store/durable/answerMemory.js";
import { fenceKeptUntil, leaseEnd, live } from "../../store/durable/records.js";
import type { LockRef, WithdrawReason } from "../../store/types.js";
import type { WatchState } from "../../store/types.js";
import type { HolderForceInput, HolderForceResult, HolderHeartbeatResult, HolderOps, HolderWithdrawResult } from "./types.js";

/**
 * The per-holder leases of the many-holder kinds on the Durable store, the
 * same rules as lua/holders.lua and lua/holders/*.lua: synchronous on
 * the lock object's storage (atomic like a script), `now` the object's clock.
 * Each lock has its own object, so the keys need no name.
 */

export interface HolderLease {
  /** Lease length of its last acquire (a heartbeat's default). */
  ttl: number;
  /** A heartbeat's ttl: the lease's length since (see leaseEnd). */
  lastTtl?: number;
  exp: number;
  fence: number;
  watch: boolean;
  /** A grant from the line not yet picked up: the object may take it back. */
  pickupBy?: number;
  /** Its holder label, when it gave one. */
  holder?: string;
}

/** The holders of a lock, with the kind's own fields (the semaphore's limit). */
export interface HolderSet<H extends HolderLease> {
  holders: Record<string, H>;
  limit?: number;
}

export const FENCE = "holders:fence";
const SET = "holders";
const GATE = "holders:gate";
const ENDED = "holders:ended:";

interface Gate {
  token: string;
  until: number;
}

/**
 * The live holders (lapsed ones left out; `save` drops them for good), each
 * lease's end as it stands on the object's clock; leases a clock that went
 * back moved are stored moved at once.
 */
export function load<H extends HolderLease>(kv: SyncKvStorage, now: number): HolderSet<H> {
  const set = kv.get<HolderSet<H>>(SET);
  if (!set) return { holders: {} };
  const holders: Record<string, H> = {};
  let moved = false;
  for (const [token, h] of Object.entries(set.holders)) {
    const exp = leaseEnd(h.exp, h.lastTtl ?? h.ttl, now);
    if (exp !== h.exp) moved = true;
    if (exp > now) holders[token] = exp === h.exp ? h : { ...h, exp };
  }
  // A copy is stored: what is put is frozen (the lock object's KeptKv), and the caller changes the set it gets.
  if (moved) save(kv, { ...set, holders: { ...holders } });
  return { ...set, holders };
}

/** Stores the set, or deletes it (with the kind's fields) when nobody holds. */
export function save<H extends HolderLease>(kv: SyncKvStorage, set: HolderSet<H>): void {
  if (Object.keys(set.holders).length) kv.put(SET, set);
  else kv.delete(SET);
}

/** The holder in the way whose lease ends first (pred: which holders are in the way), as a busy answer names it. */
export function firstInWay<H extends HolderLease>(set: HolderSet<H>, pred: (h: H) => boolean = () => true): CurrentHolder | undefined {
  let first: H | undefined;
  for (const h of Object.values(set.holders)) if (pred(h) && (first === undefined || h.exp < first.exp)) first = h;
  return first && { holder: first.holder ?? null, expiresAt: first.exp };
}

/** The labels of the first holders to end (at most 10), as inspect lists them. */
export function labelsOf<H extends HolderLease>(set: HolderSet<H>): string[] {
  return Object.values(set.holders)
    .filter((h) => h.holder !== undefined)
    .sort((a, b) => a.exp - b.exp)
    .slice(0, 10)
    .map((h) => h.holder as string);
}

export function firstEnd<H extends HolderLease>(set: HolderSet<H>, pred: (h: H) => boolean = () => true): number | undefined {
  let first: number | undefined;
  for (const h of Object.values(set.holders)) if (pred(h) && (first === undefined || h.exp < first)) first = h.exp;
  return first;
}

export function lastEnd<H extends HolderLease>(set: HolderSet<H>): number | undefined {
  let last: number | undefined;
  for (const h of Object.values(set.holders)) if (last === undefined || h.exp > last) last = h.exp;
  return last;
}

export function gateExists(kv: SyncKvStorage, now: number): boolean {
  return live<Gate>(kv, GATE, now, (g) => g.until) !== undefined;
}

export function setGate(kv: SyncKvStorage, token: string, until: number): void {
  kv.put<Gate>(GATE, { token, until });
}

export function dropGate(kv: SyncKvStorage): void {
  kv.delete(GATE);
}

/** A watched holder released on purpose: remembered, so a watch that missed the news does not report a lapse. */
export function markEnded(kv: SyncKvStorage, token: string, now: number): void {
  kv.put(ENDED + token, { until: now + ENDED_KEEP_MS });
}

function heartbeat<H extends HolderLease>(kv: SyncKvStorage, now: number, input: { token: string; ttlMs?: number }): HolderHeartbeatResult {
  const set = load<H>(kv, now);
  const mine = set.holders[input.token];
  if (!mine) return { status: "lost" };
  const ttl = input.ttlMs ?? mine.ttl;
  const next: H = { ...mine, exp: now + ttl, lastTtl: ttl };
  delete next.pickupBy;
  set.holders[input.token] = next;
  save(kv, set);
  // The gate is left alone (see lua/holders/heartbeat.lua): the lock object's queue step renews it while it has a line.
  return { status: "ok", expiresAt: next.exp, ttlMs: ttl, fence: mine.fence };
}

/** The same rules as lua/holders/withdraw.lua. */
function withdraw<H extends HolderLease>(kv: SyncKvStorage, now: number, input: { token: string; reason: WithdrawReason }): HolderWithdrawResult {
  const gate = live<Gate>(kv, GATE, now, (g) => g.until);
  if (input.token && gate?.token === input.token) {
    kv.delete(GATE);
    return { status: "unregistered" };
  }
  const set = load<H>(kv, now);
  const mine = set.holders[input.token];
  // A waiter that left before any grant reached it: nobody has its token, so its grant goes whatever its mark.
  if (!mine || (input.reason === "unclaimed" && mine.pickupBy === undefined)) return { status: "none" };
  delete set.holders[input.token];
  save(kv, set);
  return { status: "revoked", fence: mine.fence };
}

/** The same rules as lua/holders/force_release.lua. */
function forceRelease(kv: SyncKvStorage, now: number, input: HolderForceInput): HolderForceResult {
  const seen = recall<HolderForceResult>(kv, input, now);
  if (seen) return seen;
  const set = load(kv, now);
  const freed = Object.entries(set.holders).filter(([, h]) => input.holder === undefined || h.holder === input.holder);
  if (!freed.length) return { status: "lost" };
  const endedTokens: string[] = [];
  for (const [token, h] of freed) {
    delete set.holders[token];
    if (h.watch) {
      markEnded(kv, token, now);
      endedTokens.push(token);
    }
  }
  save(kv, set);
  const labelled = freed.filter(([, h]) => h.holder !== undefined).sort(([, a], [, b]) => a.exp - b.exp);
  const r: HolderForceResult = {
    status: "ok",
    released: freed.length,
    fence: Math.max(...freed.map(([, h]) => h.fence)),
    holder: labelled[0]?.[1].holder ?? null,
    endedTokens,
    waiters: gateExists(kv, now),
  };
  return remember(kv, input, r, now + REQUEST_MEMORY_MS);
}

function watch(kv: SyncKvStorage, now: number, token: string): WatchState {
  const mine = load(kv, now).holders[token];
  if (mine) return { state: "held", remainingMs: mine.exp - now, expiresAt: mine.exp };
  if (live<{ until: number }>(kv, ENDED + token, now, (e) => e.until)) return { state: "ended" };
  return { state: "lapsed" };
}

/** When this object next has something of its holders to clean up (a lease end, the gate, an ended mark, the fence). */
export function nextHoldersDeadline(kv: SyncKvStorage, now: number): number | undefined {
  const stored = kv.get<HolderSet<HolderLease>>(SET);
  const set = load(kv, now);
  if (stored && Object.keys(stored.holders).length !== Object.keys(set.holders).length) save(kv, set); // drop lapsed holders
  const times = [firstEnd(set), live<Gate>(kv, GATE, now, (g) => g.until)?.until, fenceKeptUntil(kv, FENCE, now)];
  for (const [key] of kv.list({ prefix: ENDED })) times.push(live<{ until: number }>(kv, key, now, (e) => e.until)?.until);
  const kept = times.filter((t): t is number => t !== undefined);
  return kept.length ? Math.min(...kept) : undefined;
}

/** The operations every many-holder kind shares, on one lock object's storage (the Durable store). */
function durableHolderOps(kv: SyncKvStorage): HolderOps {
  return {
    heartbeat: async (_ref, input) => heartbeat(kv, Date.now(), input),
    withdraw: async (_ref, input) => withdraw(kv, Date.now(), input),
    watch: async (_ref, { token }) => watch(kv, Date.now(), token ?? ""),
    ungate: async () => dropGate(kv),
    forceRelease: async (_ref, input) => forceRelease(kv, Date.now(), input),
  };
}

/**
 * A many-holder kind on one lock object's storage: the shared operations,
 * and the kind's own rules (synchronous on the storage, atomic like a
 * script), each run by the object's clock.
 */
export function durableHolderKind<AcquireInput, Acquired, Waiter, Admitted, ReleaseInput, Released, State>(
  kv: SyncKvStorage,
  rules: {
    acquire(kv: SyncKvStorage, now: number, name: string, input: AcquireInput): Acquired;
    admit(kv: SyncKvStorage, now: number, name: string, waiters: Waiter[], more: boolean): Admitted;
    release(kv: SyncKvStorage, now: number, input: ReleaseInput): Released;
    inspect(kv: SyncKvStorage, now: number): State;
  },
) {
  return {
    ...durableHolderOps(kv),
    acquire: async (ref: LockRef, input: AcquireInput) => rules.acquire(kv, Date.now(), ref.name, input),
    admit: async (ref: LockRef, waiters: Waiter[], more: boolean) => rules.admit(kv, Date.now(), ref.name, waiters, more),
    release: async (_ref: LockRef, input: ReleaseInput) => rules.release(kv, Date.now(), input),
    inspect: async (_ref: LockRef) => rules.inspect(kv, Date.now()),
  };
}
