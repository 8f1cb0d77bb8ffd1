import type { Redis } from "@upstash/redis";
import { IdempotencyKeys } from "../kinds/idempotency/idempotencyKeys.js";
import type { LockStore } from "../store/types.js";
import { checkNamespace } from "../validation.js";
import type { IdempotencyBackend } from "./idempotent/answerOnce.js";
import { storeOf } from "./storeOf.js";

export type { BeginOptions, BeginResult } from "../kinds/idempotency/idempotencyKeys.js";

export interface IdempotencyOptions {
  /** Keys live inside a namespace; the library default is "default". */
  namespace?: string;
  /** Bound on each store call in ms (default 2000). */
  timeoutMs?: number;
}

/**
 * Idempotency keys over any store: begin a key to own its work, complete it
 * with the result everyone else then gets, or fail it so it can run again.
 * As a library: `new Idempotency(redis)` with an @upstash/redis client.
 * Outcomes other than "started" and "completed" are thrown as typed errors
 * (the rules: src/kinds/idempotency/idempotencyKeys.ts). It is also what
 * `idempotent()` and the Hono middleware keep keys with (IdempotencyBackend).
 */
export class Idempotency extends IdempotencyKeys implements IdempotencyBackend {
  constructor(redisOrStore: Redis | LockStore, options: IdempotencyOptions = {}) {
    const ns = checkNamespace(options.namespace ?? "default");
    super(storeOf(redisOrStore, options.timeoutMs), ns);
  }
}
