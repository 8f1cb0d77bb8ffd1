/**
 * holdfast as a library: the same primitives the service uses, over any
 * @upstash/redis client.
 *
 *   import { Redis } from "@upstash/redis";
 *   import { Mutex } from "holdfast";
 *   const lock = new Mutex(Redis.fromEnv(), "nightly-report");
 */
export { Mutex, type AcquireOptions, type MutexOptions } from "./primitives/Mutex";
export { RedisStore, type RedisStoreOptions } from "./store/redis/RedisStore";
export type { LockStore, LockRef, MutexGrant, MutexState } from "./store/types";
export {
  HoldfastError,
  LockedError,
  LeaseLostError,
  InProgressError,
  FingerprintMismatchError,
  TooLargeError,
  StoreUnavailableError,
} from "./errors";
