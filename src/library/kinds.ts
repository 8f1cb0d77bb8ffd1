import { flowOnRedis } from "../kinds/flow/redisFlow.js";
import { electionOnRedis } from "../kinds/election/redisElection.js";
import { idempotencyOnRedis } from "../kinds/idempotency/redisIdempotency.js";
import { mutexOnQuorum } from "../kinds/mutex/quorumMutex.js";
import { mutexOnRedis } from "../kinds/mutex/redisMutex.js";
import { rwLockOnRedis } from "../kinds/rwlock/redisRwLock.js";
import { semaphoreOnRedis } from "../kinds/semaphore/redisSemaphore.js";

/**
 * The library's kinds: each kind's scripts and keys on Redis, and nothing
 * else of it (no routes, no lock object, no Hono). A new kind adds one line.
 */
export const libraryKinds = [mutexOnRedis, rwLockOnRedis, semaphoreOnRedis, idempotencyOnRedis, flowOnRedis, electionOnRedis] as const;

/** The library's kinds on a quorum of Redis databases (QuorumStore): each kind's operations joined by majority. */
export const libraryQuorumKinds = [mutexOnQuorum] as const;
