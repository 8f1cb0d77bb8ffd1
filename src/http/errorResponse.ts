import type { Context } from "hono";
import {
  ConflictError,
  FingerprintMismatchError,
  HoldfastError,
  InProgressError,
  InternalError,
  InvalidInputError,
  RateLimitedError,
  LeaseLostError,
  LockedError,
  NotConfiguredError,
  NotSupportedError,
  StoreUnavailableError,
  TooLargeError,
} from "../errors.js";
import { UnauthorizedError } from "./auth.js";
import { logError } from "../logError.js";

/** A 503's message, by whether the write may have been applied. */
export const STORE_UNAVAILABLE = {
  unknown:
    "the store did not answer in time, so the change may or may not have been applied: retry with the same Holdfast-Request-Id, which applies it once",
  not_applied: "the store is unavailable and nothing was changed: retry later",
} as const;

/** The one place where typed errors become HTTP statuses and bodies. */
export function errorResponse(c: Context, err: unknown): Response {
  if (err instanceof LockedError || err instanceof InProgressError) {
    c.header("Retry-After", String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))));
    return c.json({ error: err.code, message: err.message, retryAfterMs: err.retryAfterMs }, 409);
  }
  if (err instanceof RateLimitedError) {
    c.header("Retry-After", String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))));
    return c.json({ error: err.code, message: err.message, retryAfterMs: err.retryAfterMs }, 429);
  }
  if (err instanceof ConflictError) return c.json({ error: err.code, message: err.message }, 409);
  if (err instanceof LeaseLostError) return c.json({ error: err.code, message: err.message }, 409);
  if (err instanceof InvalidInputError) return c.json({ error: err.code, message: err.message }, 400);
  if (err instanceof UnauthorizedError) return c.json({ error: err.code, message: err.message }, 401);
  if (err instanceof TooLargeError) return c.json({ error: err.code, message: err.message }, 413);
  if (err instanceof FingerprintMismatchError) return c.json({ error: err.code, message: err.message }, 422);
  if (err instanceof NotConfiguredError) return c.json({ error: err.code, message: err.message }, 503);
  if (err instanceof NotSupportedError) return c.json({ error: err.code, message: err.message }, 501);
  if (err instanceof StoreUnavailableError) {
    // What failed inside (a script, a Redis error text, an operation's internal name) is for
    // the operator's log, under an id the caller can quote; the caller gets what it can act on.
    const errorId = `err_${crypto.randomUUID()}`;
    console.warn(`store unavailable ${errorId}: ${err.message}`);
    return c.json({ error: err.code, message: STORE_UNAVAILABLE[err.outcome], outcome: err.outcome, errorId }, 503);
  }
  if (err instanceof HoldfastError && !(err instanceof InternalError)) return c.json({ error: err.code, message: err.message }, 400);
  // A bug, not an outage: 500 with an id that is also in the log, so the two can be matched.
  const errorId = `err_${crypto.randomUUID()}`;
  logError(`internal error ${errorId}`, err);
  return c.json({ error: "internal", message: `an unexpected error occurred (${errorId})`, errorId }, 500);
}
