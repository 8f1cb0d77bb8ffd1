import type { ScriptRunner } from "../../store/redis/ScriptRunner.js";
import { redisIdempotency } from "../idempotency/redisIdempotency.js";
import { redisMutex } from "../mutex/redisMutex.js";
import { redisRwLock } from "../rwlock/redisRwLock.js";
import { redisSemaphore } from "../semaphore/redisSemaphore.js";
import type { KindOps } from "./ops.js";

/** The kind registry: what each kind brings to the Redis store (its scripts, through one runner). */
export function redisKinds(scripts: ScriptRunner): KindOps {
  return {
    mutex: redisMutex(scripts),
    rwlock: redisRwLock(scripts),
    semaphore: redisSemaphore(scripts),
    idempotency: redisIdempotency(scripts),
  };
}
