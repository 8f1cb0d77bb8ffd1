import { describe } from "vitest";
import { badInputConformance } from "../conformance/badInput";
import { clientRetriesConformance } from "../conformance/clientRetries";
import { clockStepBackConformance } from "../conformance/clockStepBack";
import { hostileInputConformance } from "../conformance/hostileInput";
import { operatorConformance } from "../conformance/operators";
import { socketBudgetConformance } from "../conformance/socketBudget";
import { lostLineConformance } from "../../src/kinds/holders/conformance/lostLine";
import { idempotencyConformance } from "../../src/kinds/idempotency/conformance/idempotencyCases";
import { holderLabelConformance } from "../../src/kinds/mutex/conformance/holderLabels";
import { lockDelayConformance } from "../../src/kinds/mutex/conformance/lockDelay";
import { mutexConformance } from "../../src/kinds/mutex/conformance/mutexCases";
import { queueConformance } from "../../src/kinds/mutex/conformance/queue";
import { rwLockConformance } from "../../src/kinds/rwlock/conformance/rwLockCases";
import { semaphoreConformance } from "../../src/kinds/semaphore/conformance/semaphoreCases";
import { retrySafetyConformance } from "../../src/kinds/mutex/conformance/retrySafety";
import { waitingConformance } from "../../src/kinds/mutex/conformance/waiting";

// One suite, both stores: the way Hono runs one router suite against every router.
for (const kind of ["redis", "durable"] as const) {
  describe(`${kind} store`, () => {
    describe("mutex", () => mutexConformance(kind));
    describe("retried requests", () => retrySafetyConformance(kind));
    describe("client retries (Holdfast-Request-Id)", () => clientRetriesConformance(kind));
    describe("waiting and expiry notifications", () => waitingConformance(kind));
    describe("the lock object's line", () => queueConformance(kind));
    describe("bad input", () => badInputConformance(kind));
    describe("hostile input", () => hostileInputConformance(kind));
    describe("wait sockets under the request budget", () => socketBudgetConformance(kind));
    describe("idempotency", () => idempotencyConformance(kind));
    describe("read-write lock", () => rwLockConformance(kind));
    describe("semaphore", () => semaphoreConformance(kind));
    describe("many holders, a lost line", () => lostLineConformance(kind));
    describe("a store clock that steps back", () => clockStepBackConformance(kind));
    describe("holder labels", () => holderLabelConformance(kind));
    describe("lock-delay", () => lockDelayConformance(kind));
    describe("operators: listing, force release, audit", () => operatorConformance(kind));
  });
}
