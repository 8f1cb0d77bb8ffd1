import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { HoldfastError, StoreUnavailableError } from "../errors";
import type { IdempotencyBeginInput, IdempotencyBeginResult } from "../kinds/idempotency/types";
import { type MutexWaitRequest, mutexQueuePolicy } from "../kinds/mutex/queuePolicy";
import type { MutexAcquireInput, MutexGrant } from "../kinds/mutex/types";
import type { LockRef } from "../store/LockRef";
import { redisStoreOf } from "../store/storeConfig";
import type { LockStore } from "../store/types";
import { newOwnerToken, newRequestId } from "../tokens";
import { LocalStore } from "./LocalStore";
import { type ObjectStoreFault, type StoreKind, type WaitOutcome, type WaitRequest, waitRequestSchema } from "./waitProtocol";
import { WaitQueue } from "./WaitQueue";
import { addWatch, checkWatches, deliverDueNotifications, dropWatch, nextWatchTime, watchCount } from "./watches";

/**
 * One lock object per (kind, namespace, name). It owns the lock's waiters
 * (FIFO, held-open requests, with in-memory timers), the lease watches for
 * onExpire, one alarm for what is stored, and on the Durable store the lock
 * state itself, so a release hands
 * the lock to the head waiter right here, in the same call.
 *
 * On the Redis store the state lives in Redis: the Worker runs uncontended
 * operations there directly, and comes here only to wait, to watch, or to
 * say that a release handed the lock to this object's registered waiter. The
 * object builds its store from the Worker's configuration and stores no
 * credentials.
 */
export class LockObject extends DurableObject<Env> {
  private readonly local = new LocalStore(this.ctx.storage.kv);
  private mutexQueue: WaitQueue<MutexWaitRequest, MutexGrant> | undefined;
  /** The alarm this instance last set (the runtime clears it when it fires). */
  private alarmAt: number | undefined;
  /** On the Durable store: a lazy bound on when stored state next needs cleaning up. */
  private cleanupAt: number | undefined;

  private get kv(): SyncKvStorage {
    return this.ctx.storage.kv;
  }

  /** The store of the requests this object serves now (waiters of one lock all use the same). */
  private storeKind: StoreKind = "durable";

  /** Redis (built from this object's own configuration) or this object's own storage. */
  private storeOf(kind: StoreKind): LockStore {
    if (kind === "durable") return this.local;
    const redis = redisStoreOf(this.env);
    if (!redis) throw new StoreUnavailableError("the lock object has no Upstash configuration", "not_applied");
    return redis;
  }

  private store(): LockStore {
    return this.storeOf(this.storeKind);
  }

  private queueFor(ref: LockRef, store: StoreKind): WaitQueue<MutexWaitRequest, MutexGrant> {
    this.storeKind = store;
    this.mutexQueue ??= new WaitQueue(mutexQueuePolicy, { store: () => this.store(), ref });
    return this.mutexQueue;
  }

  // ---- Worker -> object, both stores: waiting and watching -------------------------------

  /** POST /wait with a WaitRequest: answered once granted, refused or timed out. */
  async fetch(request: Request): Promise<Response> {
    const parsed = waitRequestSchema.safeParse(await request.json().catch(() => undefined));
    if (!parsed.success) return Response.json({ status: "internal", message: `bad wait request: ${parsed.error.message}` } satisfies WaitOutcome);
    return Response.json(await this.answerWait(parsed.data, request.signal));
  }

  private async answerWait(req: WaitRequest, signal: AbortSignal): Promise<WaitOutcome> {
    const ref = req.ref;
    const watch = req.onExpire !== undefined;
    try {
      if (req.token !== undefined || req.waitMs === 0) {
        // Re-entry, or a try-lock that asked for a watch. A try-lock never goes ahead of the line.
        const queue = this.queueFor(ref, req.store);
        if (req.token === undefined && queue.length) return { status: "locked", retryAfterMs: 100 };
        const input: MutexAcquireInput = {
          token: req.token ?? newOwnerToken(),
          mode: req.token !== undefined ? "reenter" : "new",
          ttlMs: req.ttlMs,
          requestId: newRequestId(),
          watch,
        };
        const r = await this.store().mutexAcquire(ref, input);
        if (r.status === "lost") return { status: "lost" };
        if (r.status === "busy") return { status: "locked", retryAfterMs: r.retryAfterMs };
        if (req.onExpire) this.watchLease("mutex", req.store, ref, r.grant.fence, r.grant.expiresAt, r.grant.ttlMs, req.onExpire);
        return { status: "granted", grant: r.grant, pickup: false };
      }
      const outcome = await this.queueFor(ref, req.store).wait({ ttlMs: req.ttlMs, watch }, req.waitMs, signal);
      switch (outcome.status) {
        case "granted":
          if (req.onExpire) this.watchLease("mutex", req.store, ref, outcome.grant.fence, outcome.grant.expiresAt, outcome.grant.ttlMs, req.onExpire);
          return { status: "granted", grant: outcome.grant, pickup: true };
        case "locked":
          return outcome;
        case "gone":
          return { status: "locked", retryAfterMs: 1 }; // nobody reads this
        case "unavailable":
          return { status: "unavailable", message: outcome.message, outcome: "unknown" };
        case "internal":
          return outcome;
      }
    } catch (err) {
      if (err instanceof StoreUnavailableError) return { status: "unavailable", message: err.message, outcome: err.outcome };
      console.error("lock object wait:", err);
      return { status: "internal", message: err instanceof HoldfastError ? err.message : String((err as Error)?.message ?? err) };
    } finally {
      this.schedule();
    }
  }

  /** Redis store: a release landed in Redis. It may have handed the lock to our registered waiter. */
  released(ref: LockRef, fence: number, handedTo?: MutexGrant): void {
    dropWatch(this.kv, fence);
    const queue = this.queueFor(ref, "redis");
    if (handedTo) queue.handedOver(handedTo.token, handedTo);
    else if (queue.length) queue.kick();
    this.schedule();
  }

  /** The Worker delivered a queued grant's answer to its client. */
  pickedUp(token: string): void {
    this.mutexQueue?.pickedUp(token);
  }

  /** An idempotency begin that asked for onExpire: begin, then watch the start. */
  async idempotencyBeginWatched(
    ref: LockRef,
    input: IdempotencyBeginInput,
    onExpire: string,
    store: StoreKind,
  ): Promise<IdempotencyBeginResult | ObjectStoreFault> {
    let r: IdempotencyBeginResult;
    try {
      r = await this.storeOf(store).idempotencyBegin(ref, input);
    } catch (err) {
      // An outage crosses RPC as a plain Error; said as a result, it stays a 503 with its outcome.
      if (err instanceof StoreUnavailableError) return { status: "unavailable", message: err.message, outcome: err.outcome };
      throw err;
    }
    if (r.status === "started") this.watchLease("idempotency", store, ref, r.fence, r.expiresAt, r.ttlMs, onExpire);
    return this.afterWrite(r);
  }

  /** Redis store: an idempotency key's start ended on purpose (fail): no notification. */
  ended(fence: number): void {
    dropWatch(this.kv, fence);
  }

  waiterCount(): number {
    return this.mutexQueue?.length ?? 0;
  }

  // ---- the Durable store: the state lives here (DurableStore calls these) ----------------

  async mutexAcquire(ref: LockRef, input: MutexAcquireInput) {
    return this.afterWrite(await this.local.mutexAcquire(ref, input));
  }

  async mutexHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }) {
    const r = await this.local.mutexHeartbeat(ref, input);
    if (r.status === "ok") this.mutexQueue?.pickedUp(input.token);
    return this.afterWrite(r);
  }

  async mutexRelease(ref: LockRef, input: { token: string; requestId: string }) {
    const r = await this.local.mutexRelease(ref, input);
    // The handoff happens in this same call: no second object, no round trip.
    if (r.status === "ok" && r.released) {
      dropWatch(this.kv, r.fence);
      const queue = this.queueFor(ref, "durable");
      if (r.handedTo) queue.handedOver(r.handedTo.token, r.handedTo);
      else if (queue.length) queue.kick();
    }
    return this.afterWrite(r);
  }

  async mutexWithdraw(ref: LockRef, input: { token: string }) {
    return this.afterWrite(await this.local.mutexWithdraw(ref, input));
  }

  mutexInspect(ref: LockRef) {
    return this.local.mutexInspect(ref);
  }

  async idempotencyBegin(ref: LockRef, input: IdempotencyBeginInput) {
    return this.afterWrite(await this.local.idempotencyBegin(ref, input));
  }

  async idempotencyHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }) {
    return this.afterWrite(await this.local.idempotencyHeartbeat(ref, input));
  }

  async idempotencyComplete(ref: LockRef, input: { token: string; responseJson: string; requestId: string }) {
    const r = await this.local.idempotencyComplete(ref, input);
    if (r.status === "ok") dropWatch(this.kv, r.fence);
    return this.afterWrite(r);
  }

  async idempotencyFail(ref: LockRef, input: { token: string; requestId: string }) {
    const r = await this.local.idempotencyFail(ref, input);
    if (r.status === "ok") dropWatch(this.kv, r.fence);
    return this.afterWrite(r);
  }

  idempotencyInspect(ref: LockRef) {
    return this.local.idempotencyInspect(ref);
  }

  ping(): boolean {
    return true;
  }

  // ---- the one alarm -----------------------------------------------------------------------

  async alarm(): Promise<void> {
    const now = Date.now();
    this.alarmAt = undefined;
    await checkWatches(this.kv, (kind) => this.storeOf(kind), now);
    await deliverDueNotifications(this.kv, this.env.WEBHOOK_SECRET ?? "", Date.now());
    this.cleanupAt = this.local.nextCleanup(Date.now(), true);
    if (this.cleanupAt === undefined && !watchCount(this.kv)) {
      await this.ctx.storage.deleteAll(); // nothing left to keep, not even a fence
      return;
    }
    this.schedule();
  }

  private watchLease(
    kind: "mutex" | "idempotency",
    store: StoreKind,
    ref: LockRef,
    fence: number,
    expiresAt: number,
    ttlMs: number,
    onExpire: string,
  ): void {
    // Look again when the lease would end by our clock (the store's ttl, not its clock).
    addWatch(this.kv, { kind, store, ns: ref.ns, name: ref.name, fence, expiresAt, checkAt: Date.now() + ttlMs, onExpire });
  }

  /** After a write to this object's storage: make sure an alarm will clean it up. */
  private afterWrite<T>(result: T): T {
    const due = this.local.nextCleanup(Date.now(), false);
    if (due !== undefined) this.cleanupAt = Math.min(this.cleanupAt ?? Infinity, due);
    this.schedule();
    return result;
  }

  /**
   * One alarm for what is stored: watch checks, notification retries,
   * clean-up (the waiters' timers live with them, in memory). Only ever moved
   * earlier between alarms (the alarm itself recomputes), so a busy lock does
   * not pay a storage write per request.
   */
  private schedule(): void {
    const times = [nextWatchTime(this.kv), this.cleanupAt].filter((t): t is number => t !== undefined);
    if (!times.length) return;
    const next = Math.min(...times);
    if (this.alarmAt !== undefined && this.alarmAt <= next && this.alarmAt > Date.now()) return;
    this.alarmAt = next;
    void this.ctx.storage.setAlarm(next);
  }
}
