import { SEMAPHORE } from "./types.js";
import { forceReleaseHolders } from "../manyHolders/service.js";
import { nextHoldersDeadline } from "../manyHolders/durableHolders.js";
import { stateWithLine } from "../../lockObject/ObjectKinds.js";
import { holdersForceBody } from "../../operator/schemas.js";
import { defineKind, waitedOn } from "../kind.js";
import { durableSemaphore } from "./durableSemaphore.js";
import { semaphoreObjectPart } from "./objectPart.js";
import { semaphoreOperations } from "./operations.js";
import { semaphoreOnRedis } from "./redisSemaphore.js";
import { semaphoreNotes } from "./service.js";
import { stateWithWaiters } from "../../service/leases.js";
import { semaphoreWait } from "./wait.js";
import { semaphoreAcquireBody } from "./schemas.js";

/** The semaphore (docs/API.md "Semaphore"): up to a limit of permits, admitted in order. */
export const semaphore = defineKind<typeof SEMAPHORE>({
  ...semaphoreOnRedis,
  nameInMessages: "the semaphore",
  object: {
    part: semaphoreObjectPart,
    durable: durableSemaphore,
    nextDeadline: nextHoldersDeadline,
    wait: semaphoreWait,
    watchedState: stateWithLine("semaphore"),
    acquireBody: semaphoreAcquireBody,
  },
  service: {
    inspect: (ctx, name) => stateWithWaiters(ctx, SEMAPHORE, name),
    listed: (s) => Number(s.holders) > 0 || waitedOn(s),
    forceRelease: (ctx, name, ask) => forceReleaseHolders(ctx, SEMAPHORE, name, ask.holder),
    writeNotes: semaphoreNotes,
  },
  http: {
    path: "/v1/semaphores",
    operations: semaphoreOperations,
    offeredOnQuorum: false,
    nameParam: "name",
    oneInSummaries: "a lock",
    listedInSummaries: "held or waited-on locks",
    forceReleaseBody: ["HoldersForceReleaseRequest", holdersForceBody],
  },
});
