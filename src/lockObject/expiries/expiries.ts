import { kindOps, type LockRef, type LockStore } from "../../store/types.js";
import type { WatchedLeaseId, WatchState } from "../../store/types.js";
import type { StoreKind } from "../line/waitProtocol.js";
import type { GrantedLease } from "../line/Line.js";
import { deliver, holderIdOf, MAX_ATTEMPTS, notificationFor, retryDelayMs } from "./notifications.js";
import { type PendingNotification, type Expiry, expiryIdOf } from "./expiryRecords.js";

/**
 * Expiries: leases kept for onExpire, and their undelivered notifications, kept in
 * the lock object's storage so an alarm after an eviction still finds them.
 * Nothing here holds credentials: the object builds its store from the
 * Worker's own configuration each time.
 */

/** Stored under their first name's prefix: objects keep what they stored across deploys. */
const EXPIRY = "watch:";
const NOTIFY = "notify:";
/** A lease seen still held is looked at again no sooner than this, whatever the clocks say. */
const MIN_RECHECK_MS = 250;

/**
 * nextExpiryTime's last answer per object's storage. Every write of an expiry or
 * a notification is made in this file, and each one drops the entry, so an
 * object's write that touches neither (a lock's every acquire and release)
 * asks no storage for it: two list scans less per write.
 */
const nextTimes = new WeakMap<SyncKvStorage, number | undefined>();
const expiriesChanged = (kv: SyncKvStorage) => nextTimes.delete(kv);

function addExpiry(kv: SyncKvStorage, lease: Expiry): void {
  kv.put(EXPIRY + expiryIdOf(lease), lease);
  expiriesChanged(kv);
}

/** What every kind with expiries answers: how a lease kept for onExpire stands (the store's `watch` operation). */
type Watching = { watch(ref: LockRef, lease: WatchedLeaseId): Promise<WatchState> };

/** A lease granted with onExpire: looked at again when it would end by our clock (the store's ttl, not its clock). */
export function keepExpiry(kv: SyncKvStorage, l: GrantedLease): void {
  addExpiry(kv, {
    kind: l.kind,
    store: l.store,
    ns: l.ref.ns,
    name: l.ref.name,
    fence: l.fence,
    ...(l.token === undefined ? {} : { token: l.token }),
    expiresAt: l.expiresAt,
    checkAt: Date.now() + l.ttlMs,
    onExpire: l.onExpire,
    ...(l.holderLabel === undefined ? {} : { holderLabel: l.holderLabel }),
  });
}

/** The lease of this expiry id (fence or token) ended on purpose (released, completed, failed): no notification. */
export function dropExpiry(kv: SyncKvStorage, id: number | string): void {
  // Known to have no expiry and no notification at all (looked, and none written since): nothing to drop.
  if (nextTimes.has(kv) && nextTimes.get(kv) === undefined) return;
  let dropped = kv.delete(EXPIRY + id);
  const pending = kv.get<PendingNotification>(NOTIFY + id);
  if (pending && pending.attempts === 0) dropped = kv.delete(NOTIFY + id) || dropped;
  if (dropped) expiriesChanged(kv);
}

export function expiryCount(kv: SyncKvStorage): number {
  return [...kv.list({ prefix: EXPIRY })].length + [...kv.list({ prefix: NOTIFY })].length;
}

/** Expiries past their check time: still held ones are looked at again later, lapsed ones become notifications. */
export async function checkExpiries(
  kv: SyncKvStorage,
  storeOf: (kind: StoreKind) => LockStore,
  now: number,
  onLapse: (lease: Expiry) => void = () => undefined,
): Promise<void> {
  // The keys first, then each value read again as its turn comes: this loop awaits the store, and
  // storage allows one kv.list() iterator at a time (any list meanwhile, a request's or the next
  // look's, would end this one with an error and the alarm with it).
  for (const key of keysOf(kv, EXPIRY)) {
    const lease = kv.get<Expiry>(key);
    if (!lease || lease.checkAt > now) continue; // gone meanwhile (released), or not due
    let found: WatchState;
    try {
      found = await leaseStillHeld(storeOf(lease.store), lease);
    } catch {
      kv.put(key, { ...lease, checkAt: Date.now() + 1000 }); // store down or failing: look again soon
      expiriesChanged(kv);
      continue;
    }
    // Worked out before the look below, so nothing awaits between that look and the writes after it.
    const holder = found.state === "lapsed" && lease.token !== undefined ? await holderIdOf(lease.token) : undefined;
    if (!kv.get(key)) continue; // released while we asked
    const at = Date.now();
    if (found.state === "held") {
      kv.put(key, { ...lease, expiresAt: found.expiresAt, checkAt: at + Math.max(MIN_RECHECK_MS, found.remainingMs) });
    } else {
      kv.delete(key);
      if (found.state === "lapsed") {
        kv.put(NOTIFY + expiryIdOf(lease), notificationFor(lease, at, holder));
        onLapse(lease);
      }
    }
    expiriesChanged(kv);
  }
}

export async function deliverDueNotifications(kv: SyncKvStorage, secret: string, now: number): Promise<void> {
  for (const key of keysOf(kv, NOTIFY)) {
    const n = kv.get<PendingNotification>(key);
    if (!n || n.nextAt > now) continue; // dropped meanwhile (its lease released in time), or not due
    const attempts = n.attempts + 1;
    const delivered = await deliver(n, secret);
    if (delivered || attempts >= MAX_ATTEMPTS) {
      if (!delivered) console.error(`expiry notification for fence ${n.fence} to ${n.url} dropped after ${attempts} attempts`);
      kv.delete(key);
    } else kv.put(key, { ...n, attempts, nextAt: Date.now() + retryDelayMs(attempts) });
    expiriesChanged(kv);
  }
}

/** The keys under a prefix, read whole before anything awaits (one kv.list() iterator may exist at a time). */
function keysOf(kv: SyncKvStorage, prefix: string): string[] {
  return Array.from(kv.list({ prefix }), ([key]) => key);
}

/** The earliest expiry check or notification retry, if any. */
export function nextExpiryTime(kv: SyncKvStorage): number | undefined {
  if (nextTimes.has(kv)) return nextTimes.get(kv);
  let next: number | undefined;
  for (const [, w] of kv.list<Expiry>({ prefix: EXPIRY })) next = Math.min(next ?? Infinity, w.checkAt);
  for (const [, n] of kv.list<PendingNotification>({ prefix: NOTIFY })) next = Math.min(next ?? Infinity, n.nextAt);
  nextTimes.set(kv, next);
  return next;
}

/**
 * Asks the store how a lease kept for onExpire stands: a remaining time (so the
 * store's clock and ours need not agree), ended on purpose (released,
 * completed, failed: the store remembers, in case the news of it never
 * reached us), or lapsed.
 */
function leaseStillHeld(store: LockStore, lease: Expiry): Promise<WatchState> {
  return (kindOps(store, lease.kind) as Watching).watch({ ns: lease.ns, name: lease.name }, lease);
}
