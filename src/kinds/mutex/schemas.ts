import * as z from "zod/mini";
import { onExpire, token, ttlMs, waitMs } from "../../http/schemas.js";

/** The mutex's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const mutexAcquireBody = z.strictObject({
  ttlMs,
  waitMs: z._default(waitMs, 0),
  token: z.optional(token),
  onExpire: z.optional(onExpire),
});

export const mutexGrant = z.object({
  name: z.string(),
  token: z.string(),
  fence: z.int(),
  ttlMs: z.int(),
  expiresAt: z.int(),
  count: z.int(),
});
export const releaseResponse = z.object({ released: z.boolean(), count: z.int() });
export const mutexStateResponse = z.object({
  name: z.string(),
  held: z.boolean(),
  fence: z.nullable(z.int()),
  count: z.int(),
  ttlMs: z.int(),
  expiresAt: z.nullable(z.int()),
  waiters: z.int(),
});
