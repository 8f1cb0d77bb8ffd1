import { MUTEX } from "./types.js";
import { stateWithLine } from "../../lockObject/ObjectKinds.js";
import { mutexForceBody } from "../../operator/schemas.js";
import { defineKind, waitedOn } from "../kind.js";
import { durableMutex, nextMutexDeadline } from "./durableMutex.js";
import { MutexObjectPart } from "./objectPart.js";
import { mutexOperations } from "./operations.js";
import { mutexOnRedis } from "./redisMutex.js";
import { forceReleaseMutex, mutexNotes } from "./service.js";
import { stateWithWaiters } from "../../service/leases.js";
import { mutexWait } from "./wait.js";
import { mutexAcquireBody } from "./schemas.js";

/** The mutex (docs/API.md "Mutex"): one holder, fenced leases, a fair line. */
export const mutex = defineKind<typeof MUTEX>({
  ...mutexOnRedis,
  nameInMessages: "the mutex",
  object: {
    part: (host) => new MutexObjectPart(host),
    durable: durableMutex,
    nextDeadline: nextMutexDeadline,
    wait: mutexWait,
    watchedState: stateWithLine("mutex"),
    acquireBody: mutexAcquireBody,
  },
  service: {
    inspect: (request, name) => stateWithWaiters(request, MUTEX, name),
    listed: (s) => s.held === true || waitedOn(s) || s.delayedUntil != null,
    forceRelease: (request, name, ask) => forceReleaseMutex(request, name, ask.fence),
    writeNotes: mutexNotes,
  },
  http: {
    path: "/v1/locks",
    operations: mutexOperations,
    offeredOnQuorum: true,
    nameParam: "name",
    oneInSummaries: "a lock",
    listedInSummaries: "held or waited-on locks",
    forceReleaseBody: ["MutexForceReleaseRequest", mutexForceBody],
  },
});
