import * as z from "zod/mini";
import { idempotencyWait } from "../idempotency/wait.js";
import { mutexWait } from "../mutex/wait.js";
import { rwLockWait } from "../rwlock/wait.js";
import { semaphoreWait } from "../semaphore/wait.js";

/** The kind registry: every kind's request to its lock object (src/kinds/<kind>/wait.ts), told apart by `kind`. */
export const waitRequestSchema = z.discriminatedUnion("kind", [mutexWait, rwLockWait, semaphoreWait, idempotencyWait]);

export type WaitRequest = z.infer<typeof waitRequestSchema>;
