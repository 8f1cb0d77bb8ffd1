import { DurableObject } from "cloudflare:workers";
import type { IdempotencyBeginInput, MutexAcquireInput } from "../types";
import * as idempotency from "./idempotencyState";
import * as mutex from "./mutexState";
import { forgetExpired } from "./requestMemory";

/**
 * The Durable store's state: one object per (kind, namespace, name). Every
 * method runs synchronously on the object's storage, so it is as atomic as a
 * Lua script, and time comes from the object's clock. An alarm cleans up
 * lapsed leases and remembered answers; the object deletes itself entirely
 * once even the last fence no longer needs keeping.
 */
export class LockStateObject extends DurableObject {
  private get kv(): SyncKvStorage {
    return this.ctx.storage.kv;
  }

  mutexAcquire(name: string, input: MutexAcquireInput) {
    return this.thenTidy(mutex.acquire(this.kv, Date.now(), name, input));
  }

  mutexHeartbeat(input: { token: string; ttlMs?: number }) {
    return this.thenTidy(mutex.heartbeat(this.kv, Date.now(), input));
  }

  mutexRelease(input: { token: string; requestId: string }) {
    return this.thenTidy(mutex.release(this.kv, Date.now(), input));
  }

  mutexInspect() {
    return mutex.inspect(this.kv, Date.now());
  }

  idempotencyBegin(input: IdempotencyBeginInput) {
    return this.thenTidy(idempotency.begin(this.kv, Date.now(), input));
  }

  idempotencyHeartbeat(input: { token: string; ttlMs?: number }) {
    return this.thenTidy(idempotency.heartbeat(this.kv, Date.now(), input));
  }

  idempotencyComplete(input: { token: string; responseJson: string; requestId: string }) {
    return this.thenTidy(idempotency.complete(this.kv, Date.now(), input));
  }

  idempotencyFail(input: { token: string; requestId: string }) {
    return this.thenTidy(idempotency.fail(this.kv, Date.now(), input));
  }

  idempotencyInspect() {
    return idempotency.inspect(this.kv, Date.now());
  }

  ping() {
    return true;
  }

  async alarm() {
    const next = this.nextDeadline(Date.now());
    if (next === undefined) await this.ctx.storage.deleteAll();
    else await this.ctx.storage.setAlarm(next);
  }

  /** Earliest moment something here lapses; expired entries are dropped on the way. */
  private nextDeadline(now: number): number | undefined {
    const times = [
      mutex.nextMutexDeadline(this.kv, now),
      idempotency.nextIdempotencyDeadline(this.kv, now),
      forgetExpired(this.kv, now),
    ].filter(
      (t): t is number => t !== undefined,
    );
    return times.length ? Math.min(...times) : undefined;
  }

  /** Schedules the clean-up alarm after a write; the output gate holds the reply until it is stored. */
  private thenTidy<T>(result: T): T {
    const next = this.nextDeadline(Date.now());
    if (next !== undefined) void this.ctx.storage.setAlarm(next);
    return result;
  }
}
