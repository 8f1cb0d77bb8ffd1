import * as idempotency from "../kinds/idempotency/durableIdempotency.js";
import * as holders from "../kinds/holders/durableHolders.js";
import * as mutex from "../kinds/mutex/durableMutex.js";
import * as rwlock from "../kinds/rwlock/durableRwlock.js";
import * as semaphore from "../kinds/semaphore/durableSemaphore.js";
import { REQUEST_MEMORY_MS } from "../limits.js";
import type { LockStore } from "../store/types.js";
import { forgetExpired } from "../store/durable/answerMemory.js";

/**
 * The Durable store as the lock object itself uses it: the kinds' rules run
 * synchronously on this object's storage (atomic like a script), with the
 * object's clock. The Worker reaches it through DurableStore.
 */
export class LocalStore implements LockStore {
  readonly kind = "durable" as const;

  constructor(private readonly kv: SyncKvStorage) {}

  mutexAcquire: LockStore["mutexAcquire"] = async (ref, input) => mutex.acquire(this.kv, Date.now(), ref.name, input);
  mutexHeartbeat: LockStore["mutexHeartbeat"] = async (_ref, input) => mutex.heartbeat(this.kv, Date.now(), input);
  mutexRelease: LockStore["mutexRelease"] = async (ref, input) => mutex.release(this.kv, Date.now(), ref.name, input);
  mutexWithdraw: LockStore["mutexWithdraw"] = async (_ref, input) => mutex.withdraw(this.kv, Date.now(), input);
  mutexInspect: LockStore["mutexInspect"] = async () => mutex.inspect(this.kv, Date.now());
  mutexWatch: LockStore["mutexWatch"] = async (_ref, fence) => mutex.watch(this.kv, Date.now(), fence);

  idempotencyBegin: LockStore["idempotencyBegin"] = async (_ref, input) => idempotency.begin(this.kv, Date.now(), input);
  idempotencyHeartbeat: LockStore["idempotencyHeartbeat"] = async (_ref, input) => idempotency.heartbeat(this.kv, Date.now(), input);
  idempotencyComplete: LockStore["idempotencyComplete"] = async (_ref, input) => idempotency.complete(this.kv, Date.now(), input);
  idempotencyFail: LockStore["idempotencyFail"] = async (_ref, input) => idempotency.fail(this.kv, Date.now(), input);
  idempotencyInspect: LockStore["idempotencyInspect"] = async () => idempotency.inspect(this.kv, Date.now());
  idempotencyWatch: LockStore["idempotencyWatch"] = async (_ref, fence) => idempotency.watch(this.kv, Date.now(), fence);

  rwlockAcquire: LockStore["rwlockAcquire"] = async (ref, input) => rwlock.acquire(this.kv, Date.now(), ref.name, input);
  rwlockAdmit: LockStore["rwlockAdmit"] = async (ref, waiters, more) => rwlock.admit(this.kv, Date.now(), ref.name, waiters, more);
  rwlockHeartbeat: LockStore["rwlockHeartbeat"] = async (_ref, input) => holders.heartbeat(this.kv, Date.now(), input);
  rwlockRelease: LockStore["rwlockRelease"] = async (_ref, input) => rwlock.release(this.kv, Date.now(), input);
  rwlockWithdraw: LockStore["rwlockWithdraw"] = async (_ref, input) => holders.withdraw(this.kv, Date.now(), input);
  rwlockInspect: LockStore["rwlockInspect"] = async () => rwlock.inspect(this.kv, Date.now());
  rwlockWatch: LockStore["rwlockWatch"] = async (_ref, token) => holders.watch(this.kv, Date.now(), token);
  rwlockUngate: LockStore["rwlockUngate"] = async () => holders.dropGate(this.kv);

  semaphoreAcquire: LockStore["semaphoreAcquire"] = async (ref, input) => semaphore.acquire(this.kv, Date.now(), ref.name, input);
  semaphoreAdmit: LockStore["semaphoreAdmit"] = async (ref, waiters, more) => semaphore.admit(this.kv, Date.now(), ref.name, waiters, more);
  semaphoreHeartbeat: LockStore["semaphoreHeartbeat"] = async (_ref, input) => holders.heartbeat(this.kv, Date.now(), input);
  semaphoreRelease: LockStore["semaphoreRelease"] = async (_ref, input) => semaphore.release(this.kv, Date.now(), input);
  semaphoreWithdraw: LockStore["semaphoreWithdraw"] = async (_ref, input) => holders.withdraw(this.kv, Date.now(), input);
  semaphoreInspect: LockStore["semaphoreInspect"] = async () => semaphore.inspect(this.kv, Date.now());
  semaphoreWatch: LockStore["semaphoreWatch"] = async (_ref, token) => holders.watch(this.kv, Date.now(), token);
  semaphoreUngate: LockStore["semaphoreUngate"] = async () => holders.dropGate(this.kv);

  async ping(): Promise<void> {}

  /**
   * When the stored state next has something to clean up; undefined when
   * nothing is kept. Remembered answers are only scanned (and the lapsed ones
   * dropped) when `scanAnswers`; otherwise a write's own answer, kept
   * REQUEST_MEMORY_MS, stands in for them, so a busy lock does not list every
   * answer on every write.
   */
  nextCleanup(now: number, scanAnswers: boolean): number | undefined {
    const answers = scanAnswers ? forgetExpired(this.kv, now) : now + REQUEST_MEMORY_MS;
    const times = [
      mutex.nextMutexDeadline(this.kv, now),
      idempotency.nextIdempotencyDeadline(this.kv, now),
      holders.nextHoldersDeadline(this.kv, now),
      answers,
    ];
    const kept = times.filter((t): t is number => t !== undefined);
    return kept.length ? Math.min(...kept) : undefined;
  }
}
