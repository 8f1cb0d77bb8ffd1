import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.js";
import { StoreUnavailableError } from "../errors.js";
import { IdempotencyObjectPart } from "../kinds/idempotency/objectPart.js";
import type { IdempotencyBeginInput, IdempotencyBeginResult } from "../kinds/idempotency/types.js";
import { MutexObjectPart } from "../kinds/mutex/objectPart.js";
import type { MutexAcquireInput, MutexGrant } from "../kinds/mutex/types.js";
import { rwlockObjectPart } from "../kinds/rwlock/objectPart.js";
import type { RwAcquireInput, RwMode, RwQueuedHolder } from "../kinds/rwlock/types.js";
import { semaphoreObjectPart } from "../kinds/semaphore/objectPart.js";
import type { SemaphoreAcquireInput, SemaphoreQueuedHolder } from "../kinds/semaphore/types.js";
import type { LockRef } from "../store/LockRef.js";
import { redisStoreOf } from "../store/storeConfig.js";
import type { LockStore } from "../store/types.js";
import { LocalStore } from "./LocalStore.js";
import type { LockObjectHost } from "./LockObjectHost.js";
import type { WithdrawReason } from "./QueuePolicy.js";
import { type ObjectStoreFault, type StoreKind, type WaitOutcome, waitRequestSchema } from "./waitProtocol.js";
import { addWatch, checkWatches, deliverDueNotifications, dropWatch, nextWatchTime, watchCount } from "./watches.js";

/**
 * One lock object per (kind, namespace, name). Its core: which store to act
 * on (Redis from its own configuration, or its own storage), the lease
 * watches for onExpire, and one alarm for what is stored (watch checks,
 * notification retries, clean-up). Each lock kind brings its part
 * (src/kinds/<kind>/objectPart.ts): its line of waiters, and on the Durable
 * store its operations, with a release handing the lock to the head waiter
 * in the same call. The methods below are the object's RPC entry points,
 * one line each.
 *
 * On the Redis store the state lives in Redis: the Worker runs uncontended
 * operations there directly, and comes here only to wait, to watch, or to
 * say that a release handed the lock to this object's registered waiter.
 * No credentials are ever stored.
 */
export class LockObject extends DurableObject<Env> {
  private readonly host: LockObjectHost = {
    local: new LocalStore(this.ctx.storage.kv),
    storeOf: (kind) => this.storeOf(kind),
    watchLease: (l) => {
      // Looked at again when the lease would end by our clock (the store's ttl, not its clock).
      addWatch(this.kv, {
        kind: l.kind,
        store: l.store,
        ns: l.ref.ns,
        name: l.ref.name,
        fence: l.fence,
        ...(l.token === undefined ? {} : { token: l.token }),
        expiresAt: l.expiresAt,
        checkAt: Date.now() + l.ttlMs,
        onExpire: l.onExpire,
      });
    },
    dropWatch: (id) => dropWatch(this.kv, id),
  };
  private readonly mutex = new MutexObjectPart(this.host);
  private readonly idempotency = new IdempotencyObjectPart(this.host);
  private readonly rwlock = rwlockObjectPart(this.host);
  private readonly semaphore = semaphoreObjectPart(this.host);
  /** The alarm this instance last set (the runtime clears it when it fires). */
  private alarmAt: number | undefined;
  /** On the Durable store: a lazy bound on when stored state next needs cleaning up. */
  private cleanupAt: number | undefined;

  private get kv(): SyncKvStorage {
    return this.ctx.storage.kv;
  }

  private storeOf(kind: StoreKind): LockStore {
    if (kind === "durable") return this.host.local;
    const redis = redisStoreOf(this.env);
    if (!redis) throw new StoreUnavailableError("the lock object has no Upstash configuration", "not_applied");
    return redis;
  }

  // ---- Worker -> object, both stores ----------------------------------------------------------

  /** POST /wait with a WaitRequest: answered once granted, refused or timed out. Fetch, so a disconnect aborts it. */
  async fetch(request: Request): Promise<Response> {
    const parsed = waitRequestSchema.safeParse(await request.json().catch(() => undefined));
    if (!parsed.success)
      return Response.json({ status: "internal", message: `bad wait request: ${parsed.error.message}` } satisfies WaitOutcome<never>);
    const req = parsed.data;
    try {
      switch (req.kind) {
        case "mutex":
          return Response.json(await this.mutex.wait(req, request.signal));
        case "rwlock":
          return Response.json(await this.rwlock.wait(req, request.signal));
        case "semaphore":
          return Response.json(await this.semaphore.wait(req, request.signal));
      }
    } finally {
      this.schedule();
    }
  }

  /** Redis store: a release landed; it may have handed the lock to our registered waiter. */
  released(ref: LockRef, fence: number, handedTo?: MutexGrant): void {
    this.mutex.released(ref, "redis", fence, handedTo);
    this.schedule();
  }

  /** Redis store: a read-write lock or semaphore holder released; the line may move, its watch ends if it released for good. */
  holderReleased(kind: "rwlock" | "semaphore", ref: LockRef, token: string, endedWatch: boolean): void {
    (kind === "rwlock" ? this.rwlock : this.semaphore).released(ref, "redis", token, endedWatch);
    this.schedule();
  }

  /** The Worker delivered a queued grant's answer to its client. (Each object serves one kind; the others know no such token.) */
  pickedUp(token: string): void {
    this.mutex.pickedUp(token);
    this.rwlock.pickedUp(token);
    this.semaphore.pickedUp(token);
  }

  waiterCount(): number {
    return this.mutex.waiterCount + this.rwlock.waiterCount + this.semaphore.waiterCount;
  }

  async idempotencyBeginWatched(
    ref: LockRef,
    input: IdempotencyBeginInput,
    onExpire: string,
    store: StoreKind,
  ): Promise<IdempotencyBeginResult | ObjectStoreFault> {
    return this.afterWrite(await this.idempotency.beginWatched(ref, input, onExpire, store));
  }

  /** Redis store: an idempotency key's start ended on purpose (fail): no notification. */
  ended(fence: number): void {
    this.idempotency.ended(fence);
  }

  // ---- the Durable store: the state lives here (DurableStore calls these) --------------------

  async mutexAcquire(ref: LockRef, input: MutexAcquireInput) {
    return this.afterWrite(await this.mutex.acquireHere(ref, input));
  }
  async mutexHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }) {
    return this.afterWrite(await this.mutex.heartbeatHere(ref, input));
  }
  async mutexRelease(ref: LockRef, input: { token: string; requestId: string }) {
    return this.afterWrite(await this.mutex.releaseHere(ref, input));
  }
  async mutexWithdraw(ref: LockRef, input: { token: string; reason: WithdrawReason }) {
    return this.afterWrite(await this.mutex.withdrawHere(ref, input));
  }
  mutexInspect(ref: LockRef) {
    return this.host.local.mutexInspect(ref);
  }
  mutexWatch(ref: LockRef, fence: number) {
    return this.host.local.mutexWatch(ref, fence);
  }

  async idempotencyBegin(ref: LockRef, input: IdempotencyBeginInput) {
    return this.afterWrite(await this.idempotency.beginHere(ref, input));
  }
  async idempotencyHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }) {
    return this.afterWrite(await this.idempotency.heartbeatHere(ref, input));
  }
  async idempotencyComplete(ref: LockRef, input: { token: string; responseJson: string; requestId: string }) {
    return this.afterWrite(await this.idempotency.completeHere(ref, input));
  }
  async idempotencyFail(ref: LockRef, input: { token: string; requestId: string }) {
    return this.afterWrite(await this.idempotency.failHere(ref, input));
  }
  idempotencyInspect(ref: LockRef) {
    return this.host.local.idempotencyInspect(ref);
  }
  idempotencyWatch(ref: LockRef, fence: number) {
    return this.host.local.idempotencyWatch(ref, fence);
  }

  async rwlockAcquire(ref: LockRef, input: RwAcquireInput) {
    return this.afterWrite(await this.host.local.rwlockAcquire(ref, input));
  }
  async rwlockAdmit(ref: LockRef, waiters: RwQueuedHolder[], more: boolean) {
    return this.afterWrite(await this.host.local.rwlockAdmit(ref, waiters, more));
  }
  async rwlockHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }) {
    const r = await this.host.local.rwlockHeartbeat(ref, input);
    if (r.status === "ok") this.rwlock.pickedUp(input.token);
    return this.afterWrite(r);
  }
  async rwlockRelease(ref: LockRef, input: { token: string; mode: RwMode | "any"; requestId: string }) {
    const r = await this.host.local.rwlockRelease(ref, input);
    if (r.status === "ok") this.rwlock.released(ref, "durable", input.token, r.released && r.watched);
    return this.afterWrite(r);
  }
  async rwlockWithdraw(ref: LockRef, input: { token: string; reason: WithdrawReason }) {
    return this.afterWrite(await this.host.local.rwlockWithdraw(ref, input));
  }
  rwlockInspect(ref: LockRef) {
    return this.host.local.rwlockInspect(ref);
  }
  rwlockWatch(ref: LockRef, token: string) {
    return this.host.local.rwlockWatch(ref, token);
  }
  async rwlockUngate(ref: LockRef) {
    return this.afterWrite(await this.host.local.rwlockUngate(ref));
  }

  async semaphoreAcquire(ref: LockRef, input: SemaphoreAcquireInput) {
    return this.afterWrite(await this.host.local.semaphoreAcquire(ref, input));
  }
  async semaphoreAdmit(ref: LockRef, waiters: SemaphoreQueuedHolder[], more: boolean) {
    return this.afterWrite(await this.host.local.semaphoreAdmit(ref, waiters, more));
  }
  async semaphoreHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }) {
    const r = await this.host.local.semaphoreHeartbeat(ref, input);
    if (r.status === "ok") this.semaphore.pickedUp(input.token);
    return this.afterWrite(r);
  }
  async semaphoreRelease(ref: LockRef, input: { token: string; requestId: string }) {
    const r = await this.host.local.semaphoreRelease(ref, input);
    if (r.status === "ok") this.semaphore.released(ref, "durable", input.token, r.watched);
    return this.afterWrite(r);
  }
  async semaphoreWithdraw(ref: LockRef, input: { token: string; reason: WithdrawReason }) {
    return this.afterWrite(await this.host.local.semaphoreWithdraw(ref, input));
  }
  semaphoreInspect(ref: LockRef) {
    return this.host.local.semaphoreInspect(ref);
  }
  semaphoreWatch(ref: LockRef, token: string) {
    return this.host.local.semaphoreWatch(ref, token);
  }
  async semaphoreUngate(ref: LockRef) {
    return this.afterWrite(await this.host.local.semaphoreUngate(ref));
  }

  ping(): boolean {
    return true;
  }

  // ---- the one alarm ----------------------------------------------------------------------------

  async alarm(): Promise<void> {
    const now = Date.now();
    this.alarmAt = undefined;
    await checkWatches(this.kv, (kind) => this.storeOf(kind), now);
    await deliverDueNotifications(this.kv, this.env.WEBHOOK_SECRET ?? "", Date.now());
    this.cleanupAt = this.host.local.nextCleanup(Date.now(), true);
    if (this.cleanupAt === undefined && !watchCount(this.kv)) {
      await this.ctx.storage.deleteAll(); // nothing left to keep, not even a fence
      return;
    }
    this.schedule();
  }

  /** After a write to this object's storage: make sure an alarm will clean it up. */
  private afterWrite<T>(result: T): T {
    const due = this.host.local.nextCleanup(Date.now(), false);
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
