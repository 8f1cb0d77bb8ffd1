/**
 * The store interface: each lock kind's operations (src/kinds/<kind>/types.ts).
 * RedisStore runs the kinds' Lua scripts through Upstash; DurableStore runs
 * the same rules inside each lock's LockObject. Both pass test/conformance.
 * Outcomes a caller must branch on are results, not exceptions; a store that
 * does not answer throws StoreUnavailableError, a bug InternalError.
 */
import type { IdempotencyStore } from "../kinds/idempotency/types.js";
import type { MutexStore } from "../kinds/mutex/types.js";
import type { RwlockStore } from "../kinds/rwlock/types.js";
import type { SemaphoreStore } from "../kinds/semaphore/types.js";

export type { LockRef } from "./LockRef.js";

export interface LockStore extends MutexStore, IdempotencyStore, RwlockStore, SemaphoreStore {
  readonly kind: "redis" | "durable";
  /** Resolves when the store answers; throws StoreUnavailableError otherwise. */
  ping(): Promise<void>;
}
