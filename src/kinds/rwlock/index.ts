import { RWLOCK } from "./types.js";
import { forceReleaseHolders } from "../manyHolders/service.js";
import { nextHoldersDeadline } from "../manyHolders/durableHolders.js";
import { stateWithLine } from "../../lockObject/ObjectKinds.js";
import { holdersForceBody } from "../../operator/schemas.js";
import { defineKind, waitedOn } from "../kind.js";
import { durableRwLock } from "./durableRwLock.js";
import { rwLockObjectPart } from "./objectPart.js";
import { rwLockOperations } from "./operations.js";
import { rwLockOnRedis } from "./redisRwLock.js";
import { rwLockNotes } from "./service.js";
import { stateWithWaiters } from "../../service/leases.js";
import { rwLockWait } from "./wait.js";
import { rwAcquireBody } from "./schemas.js";

/** The read-write lock (docs/API.md "Read-write lock"): many readers or one writer, admitted in order. */
export const rwLock = defineKind<typeof RWLOCK>({
  ...rwLockOnRedis,
  nameInMessages: "the read-write lock",
  object: {
    part: rwLockObjectPart,
    durable: durableRwLock,
    nextDeadline: nextHoldersDeadline,
    wait: rwLockWait,
    watchedState: stateWithLine("rwlock"),
    acquireBody: rwAcquireBody,
  },
  service: {
    inspect: (ctx, name) => stateWithWaiters(ctx, RWLOCK, name),
    listed: (s) => s.mode !== "free" || waitedOn(s),
    forceRelease: (ctx, name, ask) => forceReleaseHolders(ctx, RWLOCK, name, ask.holder),
    writeNotes: rwLockNotes,
  },
  http: {
    path: "/v1/rwlocks",
    operations: rwLockOperations,
    offeredOnQuorum: false,
    nameParam: "name",
    oneInSummaries: "a lock",
    listedInSummaries: "held or waited-on locks",
    forceReleaseBody: ["HoldersForceReleaseRequest", holdersForceBody],
  },
});
