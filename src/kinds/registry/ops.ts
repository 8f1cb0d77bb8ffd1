/**
 * The kind registry, its first part: every lock kind and the operations it
 * brings to a store (src/kinds/<kind>/types.ts). The other parts say what
 * each kind brings to the Redis store (redis.ts), to the lock object and its
 * Durable store (object.ts) and to the HTTP API (routes.ts); a new kind is
 * added in each, and nowhere else outside its folder.
 */
import type { HolderWriteNote } from "../../holders/types.js";
import type { IdempotencyWriteNote, IdempotencyOps } from "../idempotency/types.js";
import type { IdempotencyWait } from "../idempotency/wait.js";
import type { MutexWriteNote, MutexOps } from "../mutex/types.js";
import type { MutexWait } from "../mutex/wait.js";
import type { RwLockOps } from "../rwlock/types.js";
import type { RwLockWait } from "../rwlock/wait.js";
import type { SemaphoreOps } from "../semaphore/types.js";
import type { SemaphoreWait } from "../semaphore/wait.js";

/** Every lock kind's store operations, by the kind's name (also its lock objects' name prefix). */
export interface KindOps {
  mutex: MutexOps;
  rwlock: RwLockOps;
  semaphore: SemaphoreOps;
  idempotency: IdempotencyOps;
}

export type KindName = keyof KindOps;

/** The kinds whose clients wait in their lock object's line (one acquire flow: src/service/acquireFlow.ts). */
export type WaitingKindName = "mutex" | "rwlock" | "semaphore";

import type { KIND_NAMES } from "../../wire/kindNames.js";

export { KIND_NAMES, KIND_NOUNS } from "../../wire/kindNames.js";
/** The wire's kind names are exactly the registry's kinds (a compile-time check both ways). */
type SameNames<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _kindNamesMatch: SameNames<(typeof KIND_NAMES)[number], KindName> = true;

/** Every kind's request to its lock object: a wait in its line, or one try with a watch (src/kinds/<kind>/wait.ts). */
export interface KindWait {
  mutex: MutexWait;
  rwlock: RwLockWait;
  semaphore: SemaphoreWait;
  idempotency: IdempotencyWait;
}

/** What the Worker tells a kind's lock object after a write in Redis (a release, a key given up). */
export interface KindWriteNote {
  mutex: MutexWriteNote;
  rwlock: HolderWriteNote;
  semaphore: HolderWriteNote;
  idempotency: IdempotencyWriteNote;
}
