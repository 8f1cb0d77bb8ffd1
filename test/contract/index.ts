import { describe } from "vitest";
import { idempotencyContract } from "./idempotency.cases";
import { mutexContract } from "./mutex.cases";
import { rwLockContract } from "./rwlock.cases";
import { semaphoreContract } from "./semaphore.cases";
import type { NewStore } from "./support";

/**
 * Every kind's store-boundary contract, for one store: the way Hono runs one
 * case file against every router (`runTest({ newRouter })`). The runner
 * (test/workers/contract.test.ts) calls this once per store. A new kind adds
 * its case file here.
 */
export function runContractCases({ newStore }: { newStore: NewStore }): void {
  describe("mutex", () => mutexContract(newStore));
  describe("read-write lock", () => rwLockContract(newStore));
  describe("semaphore", () => semaphoreContract(newStore));
  describe("idempotency", () => idempotencyContract(newStore));
}
