import { describe } from "vitest";
import { flowContract } from "../kinds/flow/flow.contract";
import { electionContract } from "../kinds/election/election.contract";
import { idempotencyContract } from "../kinds/idempotency/idempotency.contract";
import { mutexContract } from "../kinds/mutex/mutex.contract";
import { rwLockContract } from "../kinds/rwlock/rwLock.contract";
import { semaphoreContract } from "../kinds/semaphore/semaphore.contract";
import type { NewStore } from "./support";

/**
 * Every kind's store-boundary contract, for one store: the way Hono runs one
 * case file against every router (`runTest({ newRouter })`). The runner
 * (test/contract/contract.workers.test.ts) calls this once per store. A new kind adds
 * its case file here.
 */
export function runContractCases({ newStore }: { newStore: NewStore }): void {
  describe("mutex", () => mutexContract(newStore));
  describe("read-write lock", () => rwLockContract(newStore));
  describe("semaphore", () => semaphoreContract(newStore));
  describe("idempotency", () => idempotencyContract(newStore));
  describe("flow limit", () => flowContract(newStore));
  describe("election", () => electionContract(newStore));
}
