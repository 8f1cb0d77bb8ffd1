import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../../deadline.js";
import { InternalError, StoreUnavailableError } from "../../errors.js";
import type {
  IdempotencyBeginResult,
  IdempotencyCompleteResult,
  IdempotencyFailResult,
  IdempotencyHeartbeatResult,
  IdempotencyState,
  IdempotencyStore,
} from "../../kinds/idempotency/types.js";
import type {
  MutexAcquireResult,
  MutexHeartbeatResult,
  MutexReleaseResult,
  MutexState,
  MutexStore,
  MutexWithdrawResult,
} from "../../kinds/mutex/types.js";
import type { HolderHeartbeatResult, HolderWithdrawResult } from "../../kinds/holders/types.js";
import type { RwAcquireResult, RwGrant, RwlockStore, RwReleaseResult, RwState } from "../../kinds/rwlock/types.js";
import type { SemaphoreAcquireResult, SemaphoreGrant, SemaphoreReleaseResult, SemaphoreState, SemaphoreStore } from "../../kinds/semaphore/types.js";
import type { Admitted } from "../../kinds/holders/types.js";
import type { LockObject } from "../../lockObject/LockObject.js";
import { lockObjectOf, type LockKindName } from "../../lockObject/lockObjectOf.js";
import type { LockRef } from "../LockRef.js";
import type { LockStore } from "../types.js";
import type { WatchState } from "../WatchState.js";

/**
 * The embedded store, as the Worker sees it: each call is an RPC to the
 * lock's own LockObject, which keeps the state in its storage and acts on its
 * waiters and watches in the same step. A Cloudflare-only deployment needs no
 * Upstash account.
 */
export class DurableStore implements LockStore {
  readonly kind = "durable" as const;
  private readonly timeoutMs: number;

  constructor(
    private readonly objects: DurableObjectNamespace<LockObject>,
    options: { timeoutMs?: number } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  }

  // RPC stubs spread a union result over their promise types, so each call names its result type.
  mutexAcquire: MutexStore["mutexAcquire"] = (ref, input) =>
    this.call<MutexAcquireResult>("mutex", ref, "acquire", async (o) => o.mutexAcquire(ref, input));
  mutexHeartbeat: MutexStore["mutexHeartbeat"] = (ref, input) =>
    this.call<MutexHeartbeatResult>("mutex", ref, "heartbeat", async (o) => o.mutexHeartbeat(ref, input));
  mutexRelease: MutexStore["mutexRelease"] = (ref, input) =>
    this.call<MutexReleaseResult>("mutex", ref, "release", async (o) => o.mutexRelease(ref, input));
  mutexWithdraw: MutexStore["mutexWithdraw"] = (ref, input) =>
    this.call<MutexWithdrawResult>("mutex", ref, "withdraw", async (o) => o.mutexWithdraw(ref, input));
  mutexInspect: MutexStore["mutexInspect"] = (ref) => this.call<MutexState>("mutex", ref, "inspect", async (o) => o.mutexInspect(ref));
  mutexWatch: MutexStore["mutexWatch"] = (ref, fence) => this.call<WatchState>("mutex", ref, "watch", async (o) => o.mutexWatch(ref, fence));

  idempotencyBegin: IdempotencyStore["idempotencyBegin"] = (ref, input) =>
    this.call<IdempotencyBeginResult>("idempotency", ref, "begin", async (o) => o.idempotencyBegin(ref, input));
  idempotencyHeartbeat: IdempotencyStore["idempotencyHeartbeat"] = (ref, input) =>
    this.call<IdempotencyHeartbeatResult>("idempotency", ref, "heartbeat", async (o) => o.idempotencyHeartbeat(ref, input));
  idempotencyComplete: IdempotencyStore["idempotencyComplete"] = (ref, input) =>
    this.call<IdempotencyCompleteResult>("idempotency", ref, "complete", async (o) => o.idempotencyComplete(ref, input));
  idempotencyFail: IdempotencyStore["idempotencyFail"] = (ref, input) =>
    this.call<IdempotencyFailResult>("idempotency", ref, "fail", async (o) => o.idempotencyFail(ref, input));
  idempotencyInspect: IdempotencyStore["idempotencyInspect"] = (ref) =>
    this.call<IdempotencyState>("idempotency", ref, "inspect", async (o) => o.idempotencyInspect(ref));
  idempotencyWatch: IdempotencyStore["idempotencyWatch"] = (ref, fence) =>
    this.call<WatchState>("idempotency", ref, "watch", async (o) => o.idempotencyWatch(ref, fence));

  rwlockAcquire: RwlockStore["rwlockAcquire"] = (ref, input) =>
    this.call<RwAcquireResult>("rwlock", ref, "acquire", async (o) => o.rwlockAcquire(ref, input));
  rwlockAdmit: RwlockStore["rwlockAdmit"] = (ref, waiters, more) =>
    this.call<Admitted<RwGrant>>("rwlock", ref, "admit", async (o) => o.rwlockAdmit(ref, waiters, more));
  rwlockHeartbeat: RwlockStore["rwlockHeartbeat"] = (ref, input) =>
    this.call<HolderHeartbeatResult>("rwlock", ref, "heartbeat", async (o) => o.rwlockHeartbeat(ref, input));
  rwlockRelease: RwlockStore["rwlockRelease"] = (ref, input) =>
    this.call<RwReleaseResult>("rwlock", ref, "release", async (o) => o.rwlockRelease(ref, input));
  rwlockWithdraw: RwlockStore["rwlockWithdraw"] = (ref, input) =>
    this.call<HolderWithdrawResult>("rwlock", ref, "withdraw", async (o) => o.rwlockWithdraw(ref, input));
  rwlockInspect: RwlockStore["rwlockInspect"] = (ref) => this.call<RwState>("rwlock", ref, "inspect", async (o) => o.rwlockInspect(ref));
  rwlockWatch: RwlockStore["rwlockWatch"] = (ref, token) => this.call<WatchState>("rwlock", ref, "watch", async (o) => o.rwlockWatch(ref, token));

  rwlockUngate: RwlockStore["rwlockUngate"] = (ref) => this.call<void>("rwlock", ref, "ungate", async (o) => o.rwlockUngate(ref));

  semaphoreAcquire: SemaphoreStore["semaphoreAcquire"] = (ref, input) =>
    this.call<SemaphoreAcquireResult>("semaphore", ref, "acquire", async (o) => o.semaphoreAcquire(ref, input));
  semaphoreAdmit: SemaphoreStore["semaphoreAdmit"] = (ref, waiters, more) =>
    this.call<Admitted<SemaphoreGrant>>("semaphore", ref, "admit", async (o) => o.semaphoreAdmit(ref, waiters, more));
  semaphoreHeartbeat: SemaphoreStore["semaphoreHeartbeat"] = (ref, input) =>
    this.call<HolderHeartbeatResult>("semaphore", ref, "heartbeat", async (o) => o.semaphoreHeartbeat(ref, input));
  semaphoreRelease: SemaphoreStore["semaphoreRelease"] = (ref, input) =>
    this.call<SemaphoreReleaseResult>("semaphore", ref, "release", async (o) => o.semaphoreRelease(ref, input));
  semaphoreWithdraw: SemaphoreStore["semaphoreWithdraw"] = (ref, input) =>
    this.call<HolderWithdrawResult>("semaphore", ref, "withdraw", async (o) => o.semaphoreWithdraw(ref, input));
  semaphoreInspect: SemaphoreStore["semaphoreInspect"] = (ref) =>
    this.call<SemaphoreState>("semaphore", ref, "inspect", async (o) => o.semaphoreInspect(ref));
  semaphoreWatch: SemaphoreStore["semaphoreWatch"] = (ref, token) =>
    this.call<WatchState>("semaphore", ref, "watch", async (o) => o.semaphoreWatch(ref, token));

  semaphoreUngate: SemaphoreStore["semaphoreUngate"] = (ref) => this.call<void>("semaphore", ref, "ungate", async (o) => o.semaphoreUngate(ref));

  async ping(): Promise<void> {
    await this.call<boolean>("health", { ns: "_", name: "_" }, "ping", async (o) => o.ping());
  }

  private async call<T>(kind: LockKindName, ref: LockRef, what: string, fn: (o: DurableObjectStub<LockObject>) => Promise<T>): Promise<T> {
    const stub = lockObjectOf(this.objects, kind, ref);
    try {
      return await withDeadline(`${kind} ${what}`, this.timeoutMs, () => fn(stub));
    } catch (err) {
      throw classifyObjectFault(`${kind} ${what}`, err);
    }
  }
}

/**
 * A Durable Object call that failed: the platform's own failures (object
 * overloaded, reset, connection lost: `retryable`/`overloaded`, or not thrown
 * by our code at all) are an outage; an exception our object code threw
 * (`remote` and not retryable) is a bug.
 */
export function classifyObjectFault(what: string, err: unknown): Error {
  if (err instanceof StoreUnavailableError || err instanceof InternalError) return err;
  const e = err as { message?: string; remote?: boolean; retryable?: boolean; overloaded?: boolean };
  const message = String(e?.message ?? err).slice(0, 300);
  if (e?.remote && !e.retryable && !e.overloaded) return new InternalError(`the lock object failed ${what}: ${message}`);
  return new StoreUnavailableError(`the lock object did not answer ${what}: ${message}`, "unknown");
}
