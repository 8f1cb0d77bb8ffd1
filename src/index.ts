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
export { Mutex, type AcquireOptions, type MutexOptions } from "./primitives/Mutex.js";
export { RwLock, type RwLockOptions, type RwLockAcquireOptions } from "./primitives/RwLock.js";
/** @deprecated The same class as RwLock, under its 0.1 name (one spelling from now on: RwLock). */
export { RwLock as RWLock } from "./primitives/RwLock.js";
export { Semaphore, type SemaphoreOptions, type SemaphoreAcquireOptions } from "./primitives/Semaphore.js";
export { Idempotency, type IdempotencyOptions, type BeginOptions, type BeginResult } from "./primitives/Idempotency.js";
export { runOnce, type RunOnceOptions, type RunOnceContext } from "./primitives/runOnce.js";
export { idempotency, type IdempotencyMiddlewareOptions } from "./middleware/idempotencyMiddleware.js";
export { verifyNotification, type ExpiryNotification, type VerifyOptions, SIGNATURE_HEADER } from "./lockObject/signature.js";
export { fromHeader, fromJsonBody } from "./middleware/idempotencyKeyFrom.js";
export { RedisStore, type RedisStoreOptions } from "./store/redis/RedisStore.js";
export { QuorumStore, type QuorumStoreOptions } from "./store/quorum/QuorumStore.js";
export type { LockStore, LockRef } from "./store/types.js";
export type { MutexGrant, MutexState } from "./kinds/mutex/types.js";
export type { RwGrant, RwState } from "./kinds/rwlock/types.js";
export type { SemaphoreGrant, SemaphoreState } from "./kinds/semaphore/types.js";
export type { IdempotencyState } from "./kinds/idempotency/types.js";
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
  NotSupportedError,
  NotConfiguredError,
} from "./errors.js";
