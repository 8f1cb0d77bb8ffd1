import { z } from "zod";
import { FINGERPRINT_MAX_CHARS, RETAIN_DEFAULT_MS, RETAIN_MAX_MS, RETAIN_MIN_MS } from "../../limits.js";
import { jsonValue, onExpire, token, ttlMs } from "../../http/schemas.js";

/** Idempotency keys' request and response schemas (routes and OpenAPI). */
export const retainMs = z.number().int().min(RETAIN_MIN_MS).max(RETAIN_MAX_MS);
export const fingerprint = z.string().min(1).max(FINGERPRINT_MAX_CHARS);

export const idempotencyBeginBody = z.strictObject({
  ttlMs,
  retainMs: retainMs.default(RETAIN_DEFAULT_MS),
  fingerprint: fingerprint.optional(),
  onExpire: onExpire.optional(),
});
// The response's size is checked as a whole body (413 over 64 KiB) and again as JSON text.
export const idempotencyCompleteBody = z.strictObject({ token, response: jsonValue });
export const idempotencyFailBody = z.strictObject({ token });

export const idempotencyStarted = z.object({
  state: z.literal("started"),
  token: z.string(),
  fence: z.number().int(),
  /** The owner's deadline, as for a lock's lease (an addition to the contract's answer). */
  ttlMs: z.number().int(),
  expiresAt: z.number().int(),
});
export const idempotencyReplay = z.object({ state: z.literal("completed"), response: jsonValue, completedAt: z.number().int() });
export const idempotencyCompleted = z.object({
  state: z.literal("completed"),
  completedAt: z.number().int(),
  fence: z.number().int(),
});
export const idempotencyFailed = z.object({ state: z.literal("absent") });
export const idempotencyStateResponse = z.discriminatedUnion("state", [
  z.object({ state: z.literal("absent") }),
  z.object({ state: z.literal("started"), fence: z.number().int(), expiresAt: z.number().int() }),
  z.object({ state: z.literal("completed"), fence: z.number().int(), completedAt: z.number().int(), response: jsonValue }),
]);
