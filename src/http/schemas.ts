import { z } from "zod";
import { NAME_PATTERN, TOKEN_MAX_BYTES, TTL_MAX_MS, TTL_MIN_MS, WAIT_MAX_MS } from "../limits.js";
import { isTokenSized, TOKEN_SIZE_MESSAGE } from "../validation.js";

/**
 * Field schemas every lock kind shares, and the error and health answers.
 * Each kind's own schemas are in src/kinds/<kind>/schemas.ts. Request
 * objects are strict: unknown fields are a 400.
 */

export const nameSchema = z.string().regex(NAME_PATTERN);
export const ttlMs = z.number().int().min(TTL_MIN_MS).max(TTL_MAX_MS);
export const waitMs = z.number().int().min(0).max(WAIT_MAX_MS);
/** Bounded in UTF-8 bytes (maxLength, in characters, is the looser bound a schema can state). */
export const token = z.string().min(1).max(TOKEN_MAX_BYTES).refine(isTokenSized, TOKEN_SIZE_MESSAGE);
export const onExpire = z.url({ protocol: /^https?$/ }).max(2048);
/** Any JSON value (a stored idempotency response): one instance, so the OpenAPI document has one recursive component. */
export const jsonValue = z.json();

export const healthResponse = z.object({
  status: z.enum(["ok", "unavailable", "not_configured"]),
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
    errorId: z.string().optional(),
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
  limit: "invalid_limit",
  permits: "invalid_permits",
};
