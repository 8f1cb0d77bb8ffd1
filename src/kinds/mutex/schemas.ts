import { z } from "zod";
import { onExpire, token, ttlMs, waitMs } from "../../http/schemas.js";

/** The mutex's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const mutexAcquireBody = z.strictObject({
  ttlMs,
  waitMs: waitMs.default(0),
  token: token.optional(),
  onExpire: onExpire.optional(),
});
export const heartbeatBody = z.strictObject({ token, ttlMs: ttlMs.optional() });
export const releaseBody = z.strictObject({ token });

export const mutexGrant = z.object({
  name: z.string(),
  token: z.string(),
  fence: z.number().int(),
  ttlMs: z.number().int(),
  expiresAt: z.number().int(),
  count: z.number().int(),
});
export const heartbeatResponse = z.object({ expiresAt: z.number().int(), ttlMs: z.number().int(), fence: z.number().int() });
export const releaseResponse = z.object({ released: z.boolean(), count: z.number().int() });
export const mutexStateResponse = z.object({
  name: z.string(),
  held: z.boolean(),
  fence: z.number().int().nullable(),
  count: z.number().int(),
  ttlMs: z.number().int(),
  expiresAt: z.number().int().nullable(),
  waiters: z.number().int(),
});
