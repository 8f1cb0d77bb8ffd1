/**
 * The store interface: each lock kind's operations (src/kinds/<kind>/types.ts).
 * RedisStore runs the kinds' Lua scripts through Upstash; DurableStore runs
 * the same rules inside each lock's LockObject. Both pass test/conformance.
 * Outcomes a caller must branch on are results, not exceptions; a store that
 * does not answer throws StoreUnavailableError, a bug InternalError.
 */
import type { IdempotencyStore } from "../kinds/idempotency/types";
import type { MutexStore } from "../kinds/mutex/types";
import type { RwlockStore } from "../kinds/rwlock/types";
import type { SemaphoreStore } from "../kinds/semaphore/types";

export type { LockRef } from "./LockRef";

export interface LockStore extends MutexStore, IdempotencyStore, RwlockStore, SemaphoreStore {
  readonly kind: "redis" | "durable";
  /** Resolves when the store answers; throws StoreUnavailableError otherwise. */
  ping(): Promise<void>;
}
