import { z } from "zod";
import { onExpire, token, ttlMs, waitMs } from "../../http/schemas.js";

/** The read-write lock's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const rwAcquireBody = z.strictObject({
  ttlMs,
  waitMs: waitMs.default(0),
  token: token.optional(),
  onExpire: onExpire.optional(),
});

export const rwGrant = z.object({
  name: z.string(),
  token: z.string(),
  mode: z.enum(["read", "write"]),
  fence: z.number().int(),
  ttlMs: z.number().int(),
  expiresAt: z.number().int(),
  count: z.number().int(),
});
export const rwReleaseResponse = z.object({ released: z.boolean(), mode: z.enum(["read", "write"]), count: z.number().int() });
export const rwStateResponse = z.object({
  name: z.string(),
  mode: z.enum(["free", "read", "write"]),
  readers: z.number().int(),
  writer: z.boolean(),
  fence: z.number().int().nullable(),
  waiters: z.number().int(),
});
