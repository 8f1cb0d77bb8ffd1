import { describe } from "vitest";
import type { StoreKind } from "../support/workers/api.js";
import { lostLineConformance } from "../kinds/manyHolders/lostLine.conformance.js";
import { flowConformance } from "../kinds/flow/flow.conformance.js";
import { electionConformance } from "../kinds/election/election.conformance.js";
import { electionObserveConformance } from "../kinds/election/electionObserve.conformance.js";
import { idempotencyConformance } from "../kinds/idempotency/idempotency.conformance.js";
import { lockDelayConformance } from "../kinds/mutex/lockDelay.conformance.js";
import { mutexConformance } from "../kinds/mutex/mutex.conformance.js";
import { queueConformance } from "../kinds/mutex/queue.conformance.js";
import { retrySafetyConformance } from "../kinds/mutex/retrySafety.conformance.js";
import { waitingConformance } from "../kinds/mutex/waiting.conformance.js";
import { rwLockConformance } from "../kinds/rwlock/rwLock.conformance.js";
import { semaphoreConformance } from "../kinds/semaphore/semaphore.conformance.js";
import { badInputConformance } from "./badInput.conformance.js";
import { clientRetriesConformance } from "./clientRetries.conformance.js";
import { clockStepBackConformance } from "./clockStepBack.conformance.js";
import { holderLabelConformance } from "./holderLabels.conformance.js";
import { hostileInputConformance } from "./hostileInput.conformance.js";
import { operatorConformance } from "./operators.conformance.js";
import { socketBudgetConformance } from "./socketBudget.conformance.js";

type Suite = readonly [name: string, cases: (kind: StoreKind) => void];

/**
 * Every conformance suite, by the name its tests are reported under:
 * end-to-end HTTP cases of the whole Worker, each run once per store (by
 * runConformance). A kind's cases live with the kind
 * (test/kinds/<kind>/*.conformance.ts), the cases every kind shares here;
 * adding a suite is its entry in this list.
 */
const CONFORMANCE_SUITES: ReadonlyArray<Suite> = [
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
  ["flow limit", flowConformance],
  ["election", electionConformance],
  ["observing an election over its watch socket", electionObserveConformance],
  ["many holders, a lost line", lostLineConformance],
  ["a store clock that steps back", clockStepBackConformance],
  ["holder labels", holderLabelConformance],
  ["lock-delay", lockDelayConformance],
  ["operators: listing, force release, audit", operatorConformance],
];

/**
 * The conformance suites on one store, inside its test file's "<store> store"
 * block: the operators' suite (`part` "operators": about a third of the
 * time, a thousand locks listed) or every other one ("locks"). Each part on
 * each store is a file of its own (test/conformance/<store>Store*.workers.test.ts)
 * with its own workerd, so the four run side by side rather than one after
 * another; the Redis store's parts share the suite's Redis, as every test
 * file does.
 */
export function conformanceSuites(kind: StoreKind, part: "locks" | "operators"): void {
  for (const [name, cases] of CONFORMANCE_SUITES) {
    if ((cases === operatorConformance) === (part === "operators")) describe(name, () => cases(kind));
  }
}
