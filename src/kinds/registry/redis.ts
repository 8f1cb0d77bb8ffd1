import type { ScriptRunner } from "../../store/redis/ScriptRunner.js";
import { redisIdempotency } from "../idempotency/redisIdempotency.js";
import { redisMutex } from "../mutex/redisMutex.js";
import { redisRwLock } from "../rwlock/redisRwLock.js";
import { redisSemaphore } from "../semaphore/redisSemaphore.js";
import type { LockRef } from "../../store/LockRef.js";
import { idempotencyKeys } from "../idempotency/keys.js";
import { MUTEX_DELAY_SUFFIX, mutexKeys } from "../mutex/keys.js";
import { rwLockKeys } from "../rwlock/keys.js";
import { semaphoreKeys } from "../semaphore/keys.js";
import type { RedisKinds } from "../../store/redis/RedisStore.js";
import type { KindName, KindOps } from "./ops.js";

/** The kind registry: what each kind brings to the Redis store (its scripts, through one runner). */
function redisOps(scripts: ScriptRunner): KindOps {
  return {
    mutex: redisMutex(scripts),
    rwlock: redisRwLock(scripts),
    semaphore: redisSemaphore(scripts),
    idempotency: redisIdempotency(scripts),
  };
}

/** The kind registry: each kind's main key in Redis, the one that exists while a lock is held (or a key stored). */
const kindMainKeys: Record<KindName, (ref: LockRef) => string> = {
  mutex: (ref) => mutexKeys(ref).lock,
  rwlock: (ref) => rwLockKeys(ref).lock,
  semaphore: (ref) => semaphoreKeys(ref).lock,
  idempotency: (ref) => idempotencyKeys(ref).record,
};

/**
 * The kind registry: which keys of a lock (after its main key's closing brace) say a listing shows it:
 * the main key, and a mutex's lock-delay key (a lapsed lease's delay outlives it).
 */
const kindListedSuffixes: Record<KindName, string[]> = {
  mutex: ["", MUTEX_DELAY_SUFFIX],
  rwlock: [""],
  semaphore: [""],
  idempotency: [""],
};

/** The kind registry: each kind's watchers key (lua/FIELDS.md), kept by the lock object while it has watch sockets. */
const kindWatcherKeys: Record<KindName, (ref: LockRef) => string> = {
  mutex: (ref) => mutexKeys(ref).watchers,
  rwlock: (ref) => rwLockKeys(ref).watchers,
  semaphore: (ref) => semaphoreKeys(ref).watchers,
  idempotency: (ref) => idempotencyKeys(ref).watchers,
};

/** What the Redis store is handed (RedisStoreCore): the kinds' scripts and keys. */
export const redisKinds: RedisKinds = {
  ops: redisOps,
  mainKeys: kindMainKeys,
  listedSuffixes: kindListedSuffixes,
  watcherKeys: kindWatcherKeys,
};
