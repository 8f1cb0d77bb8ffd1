import * as z from "zod/mini";
import { holderLabel, onExpire, token, ttlMs, waitMs } from "../../wire/schemas.js";

/** The read-write lock's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const rwAcquireBody = z.strictObject({
  ttlMs,
  waitMs: z._default(waitMs, 0),
  token: z.optional(token),
  onExpire: z.optional(onExpire),
  /** Who holds it, in words: listed by GET, told to callers turned away (409). */
  holder: z.optional(holderLabel),
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
  /** The labels of the first holders to end (at most 10; holders without one left out). */
  holderLabels: z.array(z.string()),
  /** When the first holder's lease ends (null when nobody holds). */
  expiresAt: z.nullable(z.int()),
  waiters: z.int(),
});
