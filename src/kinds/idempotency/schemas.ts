import * as z from "zod/mini";
import { FINGERPRINT_MAX_CHARS, RETAIN_DEFAULT_MS, RETAIN_MAX_MS, RETAIN_MIN_MS } from "../../limits.js";
import { holderLabel, intFrom, jsonValue, leaseFields, onExpire, token, ttlMs } from "../../wire/schemas.js";

/** Idempotency keys' request and response schemas (routes and OpenAPI). */
const retainMs = intFrom(RETAIN_MIN_MS, RETAIN_MAX_MS);
const fingerprint = z.string().check(z.minLength(1), z.maxLength(FINGERPRINT_MAX_CHARS));

export const idempotencyBeginBody = z.strictObject({
  ttlMs,
  retainMs: z._default(retainMs, RETAIN_DEFAULT_MS),
  fingerprint: z.optional(fingerprint),
  onExpire: z.optional(onExpire),
  /** Who works on it, in words: shown by GET and to callers told in_progress (409). */
  holder: z.optional(holderLabel),
});
// The response's size is checked as a whole body (413 over 64 KiB) and again as JSON text.
export const idempotencyCompleteBody = z.strictObject({ token, response: jsonValue });
export const idempotencyFailBody = z.strictObject({ token });

/** With the owner's deadline, as for a lock's lease (ttlMs and expiresAt: an addition to the contract's answer). */
export const idempotencyStarted = z.object({ state: z.literal("started"), token: z.string(), ...leaseFields });
export const idempotencyReplay = z.object({ state: z.literal("completed"), response: jsonValue, completedAt: z.int() });
export const idempotencyCompleted = z.object({ state: z.literal("completed"), completedAt: z.int(), fence: z.int() });
export const idempotencyFailed = z.object({ state: z.literal("absent") });
export const idempotencyStateResponse = z.discriminatedUnion("state", [
  z.object({ state: z.literal("absent") }),
  z.object({ state: z.literal("started"), fence: z.int(), expiresAt: z.int(), holder: z.nullable(z.string()) }),
  z.object({ state: z.literal("completed"), fence: z.int(), completedAt: z.int(), response: jsonValue }),
]);
