import { z } from "zod";
import {
  FINGERPRINT_MAX_CHARS,
  NAME_PATTERN,
  RETAIN_DEFAULT_MS,
  RETAIN_MAX_MS,
  RETAIN_MIN_MS,
  TTL_MAX_MS,
  TTL_MIN_MS,
  WAIT_MAX_MS,
} from "../limits";

/**
 * Request and response schemas, shared by the routes (validation) and the
 * OpenAPI document. Request objects are strict: unknown fields are a 400.
 */

export const nameSchema = z.string().regex(NAME_PATTERN);
export const ttlMs = z.number().int().min(TTL_MIN_MS).max(TTL_MAX_MS);
export const waitMs = z.number().int().min(0).max(WAIT_MAX_MS);
export const token = z.string().min(1).max(256);
export const onExpire = z.url({ protocol: /^https?$/ }).max(2048);

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
export const retainMs = z.number().int().min(RETAIN_MIN_MS).max(RETAIN_MAX_MS);
export const fingerprint = z.string().min(1).max(FINGERPRINT_MAX_CHARS);

export const idempotencyBeginBody = z.strictObject({
  ttlMs,
  retainMs: retainMs.default(RETAIN_DEFAULT_MS),
  fingerprint: fingerprint.optional(),
  onExpire: onExpire.optional(),
});
// The response's size is checked as a whole body (413 over 64 KiB) and again as JSON text.
export const idempotencyCompleteBody = z.strictObject({ token, response: z.json() });
export const idempotencyFailBody = z.strictObject({ token });

export const idempotencyStarted = z.object({ state: z.literal("started"), token: z.string(), fence: z.number().int() });
export const idempotencyReplay = z.object({ state: z.literal("completed"), response: z.json(), completedAt: z.number().int() });
export const idempotencyCompleted = z.object({
  state: z.literal("completed"),
  completedAt: z.number().int(),
  fence: z.number().int(),
});
export const idempotencyFailed = z.object({ state: z.literal("absent") });
export const idempotencyStateResponse = z.discriminatedUnion("state", [
  z.object({ state: z.literal("absent") }),
  z.object({ state: z.literal("started"), fence: z.number().int(), expiresAt: z.number().int() }),
  z.object({ state: z.literal("completed"), fence: z.number().int(), completedAt: z.number().int(), response: z.json() }),
]);

export const healthResponse = z.object({
  status: z.enum(["ok", "unavailable"]),
  store: z.enum(["redis", "durable"]),
  answers: z.boolean(),
  latencyMs: z.number(),
});
export const errorResponse = z
  .object({
    error: z.string(),
    message: z.string(),
    retryAfterMs: z.number().int().optional(),
    outcome: z.enum(["unknown", "not_applied"]).optional(),
  })
  .loose();

/** Which error code a bad field gets; anything else is invalid_body. */
export const fieldErrorCodes: Record<string, string> = {
  ttlMs: "invalid_ttl",
  waitMs: "invalid_wait",
  token: "invalid_token",
  onExpire: "invalid_on_expire",
  retainMs: "invalid_retain",
  fingerprint: "invalid_fingerprint",
  response: "invalid_response",
};
