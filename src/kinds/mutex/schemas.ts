import * as z from "zod/mini";
import { holderLabel, onExpire, token, ttlMs, waitMs } from "../../http/schemas.js";

/** The mutex's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const mutexAcquireBody = z.strictObject({
  ttlMs,
  waitMs: z._default(waitMs, 0),
  token: z.optional(token),
  onExpire: z.optional(onExpire),
  /** Who holds it, in words: shown by GET and to callers turned away (409). */
  holder: z.optional(holderLabel),
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
  /** The holder's label; null when free or when it gave none. */
  holder: z.nullable(z.string()),
  waiters: z.int(),
});
