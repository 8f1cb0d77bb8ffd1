import { DurableObject } from "cloudflare:workers";
import type { IdempotencyBeginInput, MutexAcquireInput } from "../types";
import * as idempotency from "./idempotencyState";
import * as mutex from "./mutexState";
import { REQUEST_MEMORY_MS } from "../../limits";
import { forgetExpired } from "./requestMemory";

/**
 * The Durable store's state: one object per (kind, namespace, name). Every
 * method runs synchronously on the object's storage, so it is as atomic as a
 * Lua script, and time comes from the object's clock. An alarm cleans up
 * lapsed leases and remembered answers; the object deletes itself entirely
 * once even the last fence no longer needs keeping.
 */
export class LockStateObject extends DurableObject {
  /**
   * When the earliest remembered answer lapses (null: none), kept in memory
   * so a write does not list every remembered answer; undefined until the
   * first scan after the object wakes. The alarm's scan makes it exact again.
   */
  private answersUntil: number | null | undefined;
  /** The alarm this instance last set, to skip setting the same time again. */
  private alarmAt: number | undefined;

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
    const now = Date.now();
    this.alarmAt = undefined; // the runtime has cleared the alarm that woke us
    this.answersUntil = forgetExpired(this.kv, now) ?? null;
    const next = this.nextDeadline(now);
    if (next === undefined) await this.ctx.storage.deleteAll();
    else {
      this.alarmAt = next;
      await this.ctx.storage.setAlarm(next);
    }
  }

  /** Earliest moment something here lapses; lapsed leases and records are dropped on the way. */
  private nextDeadline(now: number): number | undefined {
    const times = [
      mutex.nextMutexDeadline(this.kv, now),
      idempotency.nextIdempotencyDeadline(this.kv, now),
      this.answersUntil ?? undefined,
    ].filter((t): t is number => t !== undefined);
    return times.length ? Math.min(...times) : undefined;
  }

  /** Schedules the clean-up alarm after a write; the output gate holds the reply until it is stored. */
  private thenTidy<T>(result: T): T {
    const now = Date.now();
    // A write may have remembered an answer until now + REQUEST_MEMORY_MS.
    if (this.answersUntil === undefined) this.answersUntil = forgetExpired(this.kv, now) ?? null;
    else this.answersUntil = Math.min(this.answersUntil ?? Infinity, now + REQUEST_MEMORY_MS);
    const next = this.nextDeadline(now);
    if (next !== undefined && next !== this.alarmAt) {
      this.alarmAt = next;
      void this.ctx.storage.setAlarm(next);
    }
    return result;
  }
}
