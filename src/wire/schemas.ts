import * as z from "zod/mini";
import { HOLDER_MAX_CHARS, NAME_PATTERN, TOKEN_MAX_BYTES, TTL_MAX_MS, TTL_MIN_MS, WAIT_MAX_MS } from "../limits.js";
import { isPrintableLabel, isTokenSized, TOKEN_SIZE_MESSAGE } from "../validation.js";

/**
 * Field schemas every lock kind shares, and the error and health answers.
 * Each kind's own schemas are in src/kinds/<kind>/schemas.ts. Request
 * objects are strict: unknown fields are a 400.
 *
 * Written with zod/mini, whose functions a bundler can drop when unused: the
 * deployed Worker carries only the checks it calls (readBody.ts supplies the
 * English messages that zod's full build would load for every locale).
 */

/** An integer from min to max. */
export const intFrom = (min: number, max: number) => z.int().check(z.gte(min), z.lte(max));

export const nameSchema = z.string().check(z.regex(NAME_PATTERN));
export const ttlMs = intFrom(TTL_MIN_MS, TTL_MAX_MS);
const waitMs = intFrom(0, WAIT_MAX_MS);
/** Bounded in UTF-8 bytes (maxLength, in characters, is the looser bound a schema can state). */
export const token = z.string().check(z.minLength(1), z.maxLength(TOKEN_MAX_BYTES), z.refine(isTokenSized, TOKEN_SIZE_MESSAGE));
/**
 * Who holds a lease, in words for people ("report-worker@host-3 pid 4121"):
 * 1 to 256 characters, none of them control or format characters (no line
 * breaks, no bidi overrides), so it prints as one honest line. User text:
 * shown escaped wherever it is shown.
 */
export const holderLabel = z
  .string()
  .check(z.minLength(1), z.maxLength(HOLDER_MAX_CHARS), z.refine(isPrintableLabel, "must be printable characters (no control or format characters)"));
export const onExpire = z.url({ protocol: /^https?$/ }).check(z.maxLength(2048));
/** Any JSON value (a stored response): one instance, so the OpenAPI document has one recursive component. */
export const jsonValue = z.json();

/**
 * What a lock's acquire body holds whatever its kind: its lease's length, how long to wait, the
 * token held to re-enter, where to notify if the lease lapses, who holds it in words (shown by GET
 * and to callers turned away, 409). A kind's body spreads it and adds its own.
 */
export const lockAcquireFields = {
  ttlMs,
  waitMs: z._default(waitMs, 0),
  token: z.optional(token),
  onExpire: z.optional(onExpire),
  holder: z.optional(holderLabel),
};
/** The same for a lock that is not re-entered (a semaphore's permits): no token. */
export const newLeaseFields = (({ token: _token, ...fields }) => fields)(lockAcquireFields);

/** A lease as a grant answers it: its fence, length and end. */
export const leaseFields = { fence: z.int(), ttlMs: z.int(), expiresAt: z.int() };

/** A lock's state as GET answers it: its name, the kind's fields, its line's count. */
export const lockState = <Shape extends z.core.$ZodShape>(shape: Shape) => z.object({ name: z.string(), ...shape, waiters: z.int() });

/** A lease's heartbeat and release, the same for every kind. */
export const heartbeatBody = z.strictObject({ token, ttlMs: z.optional(ttlMs) });
export const releaseBody = z.strictObject({ token });
export const heartbeatResponse = z.object({ expiresAt: z.int(), ttlMs: z.int(), fence: z.int() });

export const healthResponse = z.object({
  status: z.enum(["ok", "unavailable", "not_configured"]),
  store: z.enum(["redis", "durable"]),
  answers: z.boolean(),
  latencyMs: z.number(),
  /** Settings the Worker ignores or cannot use: the variable and what is wrong with which entry, never a value. Absent when there are none. */
  settingProblems: z.optional(z.array(z.object({ variable: z.string(), message: z.string() }))),
});
export const errorResponse = z.looseObject({
  error: z.string(),
  message: z.string(),
  retryAfterMs: z.optional(z.int()),
  /** On a 409 locked: who holds it now (null: no label given) and until when. */
  holder: z.optional(z.nullable(z.string())),
  expiresAt: z.optional(z.int()),
  outcome: z.optional(z.enum(["unknown", "not_applied"])),
  errorId: z.optional(z.string()),
  /** On a 429: which limit was met (the namespace's budget, a cap on waiters or sockets, a socket's message rate). */
  limit: z.optional(z.enum(["budget", "waiters_per_lock", "sockets_per_namespace", "socket_messages", "socket_flood", "socket_rate"])),
  /** On a 403: why (role, operation, name, origin); on a 401 for a scoped token: token_expired or bad_token. */
  reason: z.optional(z.string()),
});

/** Which error code a bad field gets; anything else is invalid_body. */
export const fieldErrorCodes: Record<string, string> = {
  ttlMs: "invalid_ttl",
  waitMs: "invalid_wait",
  token: "invalid_token",
  holder: "invalid_holder",
  lockDelayMs: "invalid_lock_delay",
  onExpire: "invalid_on_expire",
  retainMs: "invalid_retain",
  fingerprint: "invalid_fingerprint",
  response: "invalid_response",
  limit: "invalid_limit",
  permits: "invalid_permits",
  reason: "invalid_reason",
  fence: "invalid_fence",
  prefix: "invalid_prefix",
  operations: "invalid_operations",
  value: "invalid_value",
};
