import { z } from "zod";
import { onExpire, ttlMs, waitMs } from "../../http/schemas.js";
import { LIMIT_MAX } from "../../limits.js";

/** The semaphore's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const semaphoreAcquireBody = z
  .strictObject({
    limit: z.number().int().min(1).max(LIMIT_MAX),
    permits: z.number().int().min(1).max(LIMIT_MAX).default(1),
    ttlMs,
    waitMs: waitMs.default(0),
    onExpire: onExpire.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.permits > body.limit) {
      ctx.addIssue({ code: "custom", path: ["permits"], message: `must be at most the limit (${body.limit}), got ${body.permits}` });
    }
  });

export const semaphoreGrant = z.object({
  name: z.string(),
  token: z.string(),
  permits: z.number().int(),
  limit: z.number().int(),
  fence: z.number().int(),
  ttlMs: z.number().int(),
  expiresAt: z.number().int(),
  available: z.number().int(),
});
export const semaphoreReleaseResponse = z.object({ released: z.literal(true), permits: z.number().int(), available: z.number().int() });
export const semaphoreStateResponse = z.object({
  name: z.string(),
  limit: z.number().int().nullable(),
  used: z.number().int(),
  holders: z.number().int(),
  waiters: z.number().int(),
});
