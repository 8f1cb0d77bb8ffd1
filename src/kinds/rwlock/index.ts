import { RWLOCK } from "./types.js";
import { holdersKind } from "../manyHolders/index.js";
import { waitedOn } from "../kind.js";
import { durableRwLock } from "./durableRwLock.js";
import { rwLockObjectPart } from "./objectPart.js";
import { rwLockOperations } from "./operations.js";
import { rwLockOnRedis } from "./redisRwLock.js";
import { rwLockNotes } from "./service.js";
import { rwLockWait } from "./wait.js";
import { rwAcquireBody } from "./schemas.js";

/** The read-write lock (docs/API.md "Read-write lock"): many readers or one writer, admitted in order. */
export const rwLock = holdersKind(RWLOCK, rwLockOnRedis, {
  nameInMessages: "the read-write lock",
  object: { part: rwLockObjectPart, durable: durableRwLock, wait: rwLockWait, acquireBody: rwAcquireBody },
  service: { listed: (s) => s.mode !== "free" || waitedOn(s), writeNotes: rwLockNotes },
  http: { path: "/v1/rwlocks", operations: rwLockOperations, oneInSummaries: "a lock", listedInSummaries: "held or waited-on locks" },
});
