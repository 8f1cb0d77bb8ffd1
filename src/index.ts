/**
 * holdfast as a library: the same primitives the service uses, over any
 * @upstash/redis client.
 *
 *   import { Redis } from "@upstash/redis";
 *   import { runOnce } from "holdfast";
 *   const redis = Redis.fromEnv();
 *   await runOnce(`report:${day}`, () => buildReport(day), { redis, ttlMs: 60_000 });
 *
 * The lock kinds' classes are in src/library/index.ts.
 */
export * from "./library/index.js";
export * from "./middleware/index.js";
export { verifyNotification, type ExpiryNotification, type VerifyOptions, SIGNATURE_HEADER } from "./wire/signature.js";
export { signScopedToken, type SignScopedTokenOptions, type TokenOperation, TOKEN_OPERATIONS } from "./wire/scopedToken.js";
export { RedisStore } from "./library/RedisStore.js";
export type { RedisStoreOptions } from "./store/redis/RedisStore.js";
export type { CurrentHolder } from "./errors.js";
export { QuorumStore } from "./library/QuorumStore.js";
export type { QuorumStoreOptions } from "./store/quorum/QuorumStore.js";
export type { LockStore, LockRef } from "./store/types.js";
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
