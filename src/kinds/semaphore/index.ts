import { SEMAPHORE } from "./types.js";
import { holdersKind } from "../manyHolders/index.js";
import { waitedOn } from "../kind.js";
import { durableSemaphore } from "./durableSemaphore.js";
import { semaphoreObjectPart } from "./objectPart.js";
import { semaphoreOperations } from "./operations.js";
import { semaphoreOnRedis } from "./redisSemaphore.js";
import { semaphoreNotes } from "./service.js";
import { semaphoreWait } from "./wait.js";
import { semaphoreAcquireBody } from "./schemas.js";

/** The semaphore (docs/API.md "Semaphore"): up to a limit of permits, admitted in order. */
export const semaphore = holdersKind(SEMAPHORE, semaphoreOnRedis, {
  nameInMessages: "the semaphore",
  object: { part: semaphoreObjectPart, durable: durableSemaphore, wait: semaphoreWait, acquireBody: semaphoreAcquireBody },
  service: { listed: (s) => Number(s.holders) > 0 || waitedOn(s), writeNotes: semaphoreNotes },
  http: { path: "/v1/semaphores", operations: semaphoreOperations, oneInSummaries: "a lock", listedInSummaries: "held or waited-on locks" },
});
