import type { StoreKind } from "../workers/support/api.js";
import { badInputConformance } from "./badInput.js";
import { clientRetriesConformance } from "./clientRetries.js";
import { clockStepBackConformance } from "./clockStepBack.js";
import { lostLineConformance } from "./holders/lostLine.js";
import { hostileInputConformance } from "./hostileInput.js";
import { idempotencyConformance } from "./idempotency/idempotencyCases.js";
import { holderLabelConformance } from "./mutex/holderLabels.js";
import { lockDelayConformance } from "./mutex/lockDelay.js";
import { mutexConformance } from "./mutex/mutexCases.js";
import { queueConformance } from "./mutex/queue.js";
import { retrySafetyConformance } from "./mutex/retrySafety.js";
import { waitingConformance } from "./mutex/waiting.js";
import { operatorConformance } from "./operators.js";
import { rwLockConformance } from "./rwlock/rwLockCases.js";
import { semaphoreConformance } from "./semaphore/semaphoreCases.js";
import { socketBudgetConformance } from "./socketBudget.js";

/**
 * Every conformance suite, by the name its tests are reported under:
 * end-to-end HTTP cases of the whole Worker, each run once per store by
 * test/workers/conformance.test.ts. A kind's cases live in its own folder
 * here (test/conformance/<kind>/); adding a suite is its entry in this list.
 */
export const CONFORMANCE_SUITES: ReadonlyArray<readonly [name: string, cases: (kind: StoreKind) => void]> = [
  ["mutex", mutexConformance],
  ["retried requests", retrySafetyConformance],
  ["client retries (Holdfast-Request-Id)", clientRetriesConformance],
  ["waiting and expiry notifications", waitingConformance],
  ["the lock object's line", queueConformance],
  ["bad input", badInputConformance],
  ["hostile input", hostileInputConformance],
  ["wait sockets under the request budget", socketBudgetConformance],
  ["idempotency", idempotencyConformance],
  ["read-write lock", rwLockConformance],
  ["semaphore", semaphoreConformance],
  ["many holders, a lost line", lostLineConformance],
  ["a store clock that steps back", clockStepBackConformance],
  ["holder labels", holderLabelConformance],
  ["lock-delay", lockDelayConformance],
  ["operators: listing, force release, audit", operatorConformance],
];
