import * as z from "zod/mini";
import { intFrom, leaseFields, lockAcquireFields, lockState } from "../../wire/schemas.js";
import { LOCK_DELAY_MAX_MS } from "../../limits.js";

/** The mutex's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const mutexAcquireBody = z.strictObject({
  ...lockAcquireFields,
  /** If this lease lapses (no release), nobody gets the lock for this long after (ms). */
  lockDelayMs: z.optional(intFrom(0, LOCK_DELAY_MAX_MS)),
});

export const mutexGrant = z.object({ name: z.string(), token: z.string(), ...leaseFields, count: z.int() });
export const releaseResponse = z.object({ released: z.boolean(), count: z.int() });
export const mutexStateResponse = lockState({
  held: z.boolean(),
  fence: z.nullable(z.int()),
  count: z.int(),
  ttlMs: z.int(),
  expiresAt: z.nullable(z.int()),
  /** The holder's label; null when free or when it gave none. */
  holder: z.nullable(z.string()),
  /** Free, but a lapsed lease's lock-delay holds it until then; null otherwise. */
  delayedUntil: z.nullable(z.int()),
});
