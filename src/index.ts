/**
 * holdfast as a library: the same primitives the service uses, over any
 * @upstash/redis client.
 *
 *   import { Redis } from "@upstash/redis";
 *   import { Mutex, runOnce } from "holdfast";
 *   const redis = Redis.fromEnv();
 *   const lock = new Mutex(redis, "nightly-report");
 *   await runOnce(`report:${day}`, () => buildReport(day), { redis, ttlMs: 60_000 });
 */
export { Mutex, type AcquireOptions, type MutexOptions } from "./primitives/Mutex";
export { RWLock, type RWLockOptions, type RWLockAcquireOptions } from "./primitives/RWLock";
export { Semaphore, type SemaphoreOptions, type SemaphoreAcquireOptions } from "./primitives/Semaphore";
export { Idempotency, type IdempotencyOptions, type BeginOptions, type BeginResult } from "./primitives/Idempotency";
export { runOnce, type RunOnceOptions, type RunOnceContext } from "./primitives/runOnce";
export { idempotency, type IdempotencyMiddlewareOptions } from "./middleware/idempotency";
export { fromHeader, fromJsonBody } from "./middleware/idempotencyKeyFrom";
export { RedisStore, type RedisStoreOptions } from "./store/redis/RedisStore";
export type { LockStore, LockRef } from "./store/types";
export type { MutexGrant, MutexState } from "./kinds/mutex/types";
export type { RwGrant, RwState } from "./kinds/rwlock/types";
export type { SemaphoreGrant, SemaphoreState } from "./kinds/semaphore/types";
export type { IdempotencyState } from "./kinds/idempotency/types";
export {
  HoldfastError,
  LockedError,
  LeaseLostError,
  InProgressError,
  FingerprintMismatchError,
  ConflictError,
  TooLargeError,
  StoreUnavailableError,
  InvalidInputError,
  InternalError,
} from "./errors";
