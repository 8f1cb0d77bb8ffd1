import { kindOps, type LockRef, type LockStore } from "../../store/types.js";
import type { KindName } from "../../store/kinds.js";
import type { WatchedLeaseId, WatchState } from "../../store/types.js";
import type { StoreKind } from "../line/waitProtocol.js";
import { deliver, holderIdOf, MAX_ATTEMPTS, notificationFor, retryDelayMs } from "./notifications.js";
import { type PendingNotification, type WatchedLease, watchIdOf } from "./watchRecords.js";

/**
 * Leases watched for onExpire, and their undelivered notifications, kept in
 * the lock object's storage so an alarm after an eviction still finds them.
 * Nothing here holds credentials: the object builds its store from the
 * Worker's own configuration each time.
 */

const WATCH = "watch:";
const NOTIFY = "notify:";
/** A lease seen still held is looked at again no sooner than this, whatever the clocks say. */
const MIN_RECHECK_MS = 250;

/**
 * nextWatchTime's last answer per object's storage. Every write of a watch or
 * a notification is made in this file, and each one drops the entry, so an
 * object's write that touches neither (a lock's every acquire and release)
 * asks no storage for it: two list scans less per write.
 */
const nextTimes = new WeakMap<SyncKvStorage, number | undefined>();
const watchesChanged = (kv: SyncKvStorage) => nextTimes.delete(kv);

function addWatch(kv: SyncKvStorage, lease: WatchedLease): void {
  kv.put(WATCH + watchIdOf(lease), lease);
  watchesChanged(kv);
}

/** What every kind with watched leases answers: how a watched lease stands. */
type Watching = { watch(ref: LockRef, lease: WatchedLeaseId): Promise<WatchState> };

/** A lease granted with onExpire, as the line hands it over (its fence, and its token where holders share a fence). */

export interface GrantedLease {
  kind: KindName;
  store: StoreKind;
  ref: LockRef;
  fence: number;
  token?: string;
  expiresAt: number;
  ttlMs: number;
  onExpire: string;
  /** The holder's label, carried in the notification. */
  holderLabel?: string;
}

/** A lease granted with onExpire: looked at again when it would end by our clock (the store's ttl, not its clock). */
export function watchGrantedLease(kv: SyncKvStorage, l: GrantedLease): void {
  addWatch(kv, {
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

/** The lease of this watch id (fence or token) ended on purpose (released, completed, failed): no notification. */
export function dropWatch(kv: SyncKvStorage, id: number | string): void {
  // Known to have no watch and no notification at all (looked, and none written since): nothing to drop.
  if (nextTimes.has(kv) && nextTimes.get(kv) === undefined) return;
  let dropped = kv.delete(WATCH + id);
  const pending = kv.get<PendingNotification>(NOTIFY + id);
  if (pending && pending.attempts === 0) dropped = kv.delete(NOTIFY + id) || dropped;
  if (dropped) watchesChanged(kv);
}

export function watchCount(kv: SyncKvStorage): number {
  return [...kv.list({ prefix: WATCH })].length + [...kv.list({ prefix: NOTIFY })].length;
}

/** Watches past their check time: still held ones are looked at again later, lapsed ones become notifications. */
export async function checkWatches(
  kv: SyncKvStorage,
  storeOf: (kind: StoreKind) => LockStore,
  now: number,
  onLapse: (lease: WatchedLease) => void = () => undefined,
): Promise<void> {
  for (const [key, lease] of kv.list<WatchedLease>({ prefix: WATCH })) {
    if (lease.checkAt > now) continue;
    let found: WatchState;
    try {
      found = await leaseStillHeld(storeOf(lease.store), lease);
    } catch {
      kv.put(key, { ...lease, checkAt: Date.now() + 1000 }); // store down or failing: look again soon
      watchesChanged(kv);
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
        kv.put(NOTIFY + watchIdOf(lease), notificationFor(lease, at, holder));
        onLapse(lease);
      }
    }
    watchesChanged(kv);
  }
}

export async function deliverDueNotifications(kv: SyncKvStorage, secret: string, now: number): Promise<void> {
  for (const [key, n] of kv.list<PendingNotification>({ prefix: NOTIFY })) {
    if (n.nextAt > now) continue;
    const attempts = n.attempts + 1;
    const delivered = await deliver(n, secret);
    if (delivered || attempts >= MAX_ATTEMPTS) {
      if (!delivered) console.error(`expiry notification for fence ${n.fence} to ${n.url} dropped after ${attempts} attempts`);
      kv.delete(key);
    } else kv.put(key, { ...n, attempts, nextAt: Date.now() + retryDelayMs(attempts) });
    watchesChanged(kv);
  }
}

/** The earliest watch check or notification retry, if any. */
export function nextWatchTime(kv: SyncKvStorage): number | undefined {
  if (nextTimes.has(kv)) return nextTimes.get(kv);
  let next: number | undefined;
  for (const [, w] of kv.list<WatchedLease>({ prefix: WATCH })) next = Math.min(next ?? Infinity, w.checkAt);
  for (const [, n] of kv.list<PendingNotification>({ prefix: NOTIFY })) next = Math.min(next ?? Infinity, n.nextAt);
  nextTimes.set(kv, next);
  return next;
}

/**
 * Asks the store how a watched lease stands: a remaining time (so the
 * store's clock and ours need not agree), ended on purpose (released,
 * completed, failed: the store remembers, in case the news of it never
 * reached us), or lapsed.
 */
function leaseStillHeld(store: LockStore, lease: WatchedLease): Promise<WatchState> {
  return (kindOps(store, lease.kind) as Watching).watch({ ns: lease.ns, name: lease.name }, lease);
}
