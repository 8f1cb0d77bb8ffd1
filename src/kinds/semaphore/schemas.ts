import * as z from "zod/mini";
import { intFrom, leaseFields, lockState, newLeaseFields } from "../../wire/schemas.js";
import { LIMIT_MAX } from "../../limits.js";

/** The semaphore's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const semaphoreAcquireBody = z
  .strictObject({
    limit: intFrom(1, LIMIT_MAX),
    permits: z._default(intFrom(1, LIMIT_MAX), 1),
    ...newLeaseFields,
  })
  .check(
    z.superRefine((body, ctx) => {
      if (body.permits > body.limit) {
        ctx.addIssue({ code: "custom", path: ["permits"], message: `must be at most the limit (${body.limit}), got ${body.permits}` });
      }
    }),
  );

export const semaphoreGrant = z.object({ name: z.string(), token: z.string(), permits: z.int(), limit: z.int(), ...leaseFields, available: z.int() });
export const semaphoreReleaseResponse = z.object({ released: z.literal(true), permits: z.int(), available: z.int() });
export const semaphoreStateResponse = lockState({
  limit: z.nullable(z.int()),
  used: z.int(),
  holders: z.int(),
  /** The labels of the first holders to end (at most 10; holders without one left out). */
  holderLabels: z.array(z.string()),
  /** When the first holder's lease ends (null when nobody holds). */
  expiresAt: z.nullable(z.int()),
});
