/** The library's lock kinds: their classes, options and answers (src/index.ts exports them all, and the Hono middleware). */
export { Mutex, type AcquireOptions, type MutexOptions } from "./Mutex.js";
export { RwLock, type RwLockOptions, type RwLockAcquireOptions } from "./RwLock.js";
/** @deprecated The same class as RwLock, under its 0.1 name (one spelling from now on: RwLock). */
export { RwLock as RWLock } from "./RwLock.js";
export { Semaphore, type SemaphoreOptions, type SemaphoreAcquireOptions } from "./Semaphore.js";
export { FlowLimit, type FlowLimitOptions, type SlotAcquireOptions } from "./FlowLimit.js";
export { Idempotency, type IdempotencyOptions, type BeginOptions, type BeginResult } from "./Idempotency.js";
export { Election, type ElectionOptions, type CampaignOptions } from "./Election.js";
export { runOnce, type RunOnceOptions, type RunOnceContext } from "./runOnce.js";
export { idempotent, senders, type IdempotentOptions, type KeySource } from "./idempotent/idempotent.js";
export type { MutexGrant, MutexState } from "../kinds/mutex/types.js";
export type { RwGrant, RwState } from "../kinds/rwlock/types.js";
export type { SemaphoreGrant, SemaphoreState } from "../kinds/semaphore/types.js";
export type { FlowGrant, FlowState } from "../kinds/flow/types.js";
export type { IdempotencyState } from "../kinds/idempotency/types.js";
export type { ElectionChange, ElectionView } from "../kinds/election/types.js";
