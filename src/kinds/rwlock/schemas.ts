import * as z from "zod/mini";
import { onExpire, token, ttlMs, waitMs } from "../../http/schemas.js";

/** The read-write lock's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const rwAcquireBody = z.strictObject({
  ttlMs,
  waitMs: z._default(waitMs, 0),
  token: z.optional(token),
  onExpire: z.optional(onExpire),
});

export const rwGrant = z.object({
  name: z.string(),
  token: z.string(),
  mode: z.enum(["read", "write"]),
  fence: z.int(),
  ttlMs: z.int(),
  expiresAt: z.int(),
  count: z.int(),
});
export const rwReleaseResponse = z.object({ released: z.boolean(), mode: z.enum(["read", "write"]), count: z.int() });
export const rwStateResponse = z.object({
  name: z.string(),
  mode: z.enum(["free", "read", "write"]),
  readers: z.int(),
  writer: z.boolean(),
  fence: z.nullable(z.int()),
  waiters: z.int(),
});
