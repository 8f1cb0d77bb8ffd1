import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { newOwnerToken, newRequestId } from "../tokens";
import { storeFrom } from "../store/storeConfig";
import type { LockStore, MutexAcquireResult } from "../store/types";
import { deliver, MAX_ATTEMPTS, notificationFor, retryDelayMs } from "./notifications";
import type { PendingNotification, WaitOutcome, WaitRequest, WatchedLease } from "./types";
import { leaseStillHeld } from "./leaseStillHeld";

interface Waiter {
  req: WaitRequest;
  store: LockStore;
  settled: boolean;
  finish(outcome: WaitOutcome): void;
}

const WATCH = "watch:";
const NOTIFY = "notify:";

/**
 * One room per lock (kind, namespace, name), used with both stores. It holds
 * waiting acquires open and grants them first-come, first-served; a release
 * (told by the Worker) or the holder's lease expiry (an alarm at its
 * expiresAt) wakes the head waiter, with no polling. It also watches leases
 * that asked for onExpire and posts a signed notification when one lapses.
 *
 * Waiters live in memory (they are open requests); watched leases and
 * undelivered notifications live in storage, so an alarm after an eviction
 * still finds them. Alarm runs are idempotent: they re-read the store.
 */
export class LockRoom extends DurableObject<Env> {
  private readonly queue: Waiter[] = [];
  /** The current holder's lease end as last seen by this room. */
  private holderExpiresAt: number | undefined;
  private pumping = false;
  private pumpAgain = false;

  private get kv(): SyncKvStorage {
    return this.ctx.storage.kv;
  }

  /** POST /wait with a WaitRequest: answers a WaitOutcome once granted or timed out. */
  async fetch(request: Request): Promise<Response> {
    const req = (await request.json()) as WaitRequest;
    const store = storeFrom(req.store, this.env);
    return new Promise<Response>((resolve) => {
      const waiter: Waiter = {
        req,
        store,
        settled: false,
        finish: (outcome) => {
          if (waiter.settled) return;
          waiter.settled = true;
          clearTimeout(timer);
          this.drop(waiter);
          resolve(Response.json(outcome));
        },
      };
      const timer = setTimeout(() => {
        const left = this.holderExpiresAt === undefined ? req.ttlMs : this.holderExpiresAt - Date.now();
        waiter.finish({ status: "timeout", retryAfterMs: Math.max(1, left) });
      }, req.waitMs);
      // The client went away: leave the queue now, not when the lock frees.
      request.signal.addEventListener("abort", () => waiter.finish({ status: "timeout", retryAfterMs: 0 }));
      // Only a new head tries the store: anyone behind it is woken through
      // the head (release or expiry), so a try now would only cost a call.
      const isHead = this.queue.length === 0;
      this.queue.push(waiter);
      if (isHead) this.pump();
    });
  }

  /** Watch a lease for onExpire. */
  watch(lease: WatchedLease): void {
    this.kv.put(WATCH + lease.fence, lease);
    this.schedule();
  }

  /** A heartbeat moved the holder's lease end: move the alarm with it. */
  leaseMoved(fence: number, expiresAt: number): void {
    const lease = this.kv.get<WatchedLease>(WATCH + fence);
    if (lease) this.kv.put(WATCH + fence, { ...lease, expiresAt });
    if (this.queue.length) this.holderExpiresAt = expiresAt;
    this.schedule();
  }

  /** The holder released: wake the head waiter, forget the watch. */
  released(fence: number): void {
    this.kv.delete(WATCH + fence);
    const pending = this.kv.get<PendingNotification>(NOTIFY + fence);
    if (pending && pending.attempts === 0) this.kv.delete(NOTIFY + fence);
    this.holderExpiresAt = undefined;
    this.pump();
    this.schedule();
  }

  waiterCount(): number {
    return this.queue.length;
  }

  async alarm(): Promise<void> {
    const now = Date.now();
    await this.checkWatchedLeases(now);
    if (this.queue.length && (this.holderExpiresAt ?? 0) <= now) this.pump();
    await this.deliverDueNotifications(now);
    this.schedule();
  }

  /** Grants waiters in order until one finds the lock busy. One pump runs at a time. */
  private pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void (async () => {
      try {
        do {
          this.pumpAgain = false;
          await this.grantHead();
        } while (this.pumpAgain);
      } finally {
        this.pumping = false;
        this.schedule();
      }
    })();
  }

  private async grantHead(): Promise<void> {
    while (this.queue.length) {
      const waiter = this.queue[0];
      const token = newOwnerToken();
      let result: MutexAcquireResult;
      try {
        result = await waiter.store.mutexAcquire(
          { ns: waiter.req.ns, name: waiter.req.name },
          // watch: the holder's release and heartbeats must reach this room.
          { token, reenter: false, ttlMs: waiter.req.ttlMs, requestId: newRequestId(), watch: true },
        );
      } catch (err) {
        waiter.finish({ status: "error", message: err instanceof Error ? err.message : String(err) });
        continue;
      }
      if (result.status === "busy") {
        this.holderExpiresAt = result.expiresAt;
        return;
      }
      if (result.status !== "granted") continue;
      if (waiter.settled) {
        // Timed out or disconnected while we acquired: give the lock back.
        await waiter.store.mutexRelease({ ns: waiter.req.ns, name: waiter.req.name }, { token, requestId: newRequestId() }).catch(() => {});
        continue;
      }
      const grant = result.grant;
      this.holderExpiresAt = grant.expiresAt;
      if (waiter.req.onExpire) {
        this.watch({ kind: "mutex", ns: waiter.req.ns, name: waiter.req.name, fence: grant.fence, expiresAt: grant.expiresAt, onExpire: waiter.req.onExpire, store: waiter.req.store });
      }
      waiter.finish({ status: "granted", grant });
      return;
    }
  }

  private drop(waiter: Waiter): void {
    const i = this.queue.indexOf(waiter);
    if (i >= 0) this.queue.splice(i, 1);
  }

  /** Leases past their end: extended ones are rescheduled, lapsed ones become notifications. */
  private async checkWatchedLeases(now: number): Promise<void> {
    for (const [key, lease] of this.kv.list<WatchedLease>({ prefix: WATCH })) {
      if (lease.expiresAt > now) continue;
      let found: Awaited<ReturnType<typeof leaseStillHeld>>;
      try {
        found = await leaseStillHeld(storeFrom(lease.store, this.env), lease);
      } catch {
        this.kv.put(key, { ...lease, expiresAt: now + 1000 }); // store down: look again soon
        continue;
      }
      if (!this.kv.get(key)) continue; // released while we asked
      if (found.state === "held") this.kv.put(key, { ...lease, expiresAt: found.expiresAt });
      else {
        this.kv.delete(key);
        if (found.state === "lapsed") this.kv.put(NOTIFY + lease.fence, notificationFor(lease, now));
      }
    }
  }

  private async deliverDueNotifications(now: number): Promise<void> {
    const secret = this.env.WEBHOOK_SECRET ?? "";
    for (const [key, n] of this.kv.list<PendingNotification>({ prefix: NOTIFY })) {
      if (n.nextAt > now) continue;
      const attempts = n.attempts + 1;
      const delivered = await deliver(n, secret);
      if (delivered || attempts >= MAX_ATTEMPTS) {
        if (!delivered) console.error(`expiry notification for fence ${n.fence} to ${n.url} dropped after ${attempts} attempts`);
        this.kv.delete(key);
      } else this.kv.put(key, { ...n, attempts, nextAt: Date.now() + retryDelayMs(attempts) });
    }
  }

  /** The alarm goes off at the earliest of: holder expiry (if anyone waits), watched lease ends, notification retries. */
  private schedule(): void {
    const times: number[] = [];
    if (this.queue.length && this.holderExpiresAt !== undefined) times.push(this.holderExpiresAt);
    for (const [, lease] of this.kv.list<WatchedLease>({ prefix: WATCH })) times.push(lease.expiresAt);
    for (const [, n] of this.kv.list<PendingNotification>({ prefix: NOTIFY })) times.push(n.nextAt);
    if (times.length) void this.ctx.storage.setAlarm(Math.min(...times));
    else void this.ctx.storage.deleteAlarm();
  }
}
