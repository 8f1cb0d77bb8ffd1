import {
  ConflictError,
  FingerprintMismatchError,
  ForbiddenError,
  HoldfastError,
  InProgressError,
  InternalError,
  InvalidInputError,
  RateLimitedError,
  SocketIdleError,
  LeaseLostError,
  LockedError,
  NotConfiguredError,
  NotHeldError,
  NotSupportedError,
  StoreUnavailableError,
  TooLargeError,
  UnauthorizedError,
  UpgradeRequiredError,
} from "../errors.js";
import { logError } from "../logError.js";

/** A 503's message, by whether the write may have been applied. */
const STORE_UNAVAILABLE = {
  unknown:
    "the store did not answer in time, so the change may or may not have been applied: a retry with the same Holdfast-Request-Id applies it once (a request sent without one is a new request when retried)",
  not_applied: "the store is unavailable and nothing was changed: retry later",
} as const;

/** An error as the caller gets it: the HTTP status, the JSON body and, for a 409 or 429 that says when, Retry-After. */
export interface ErrorAnswer {
  status: 400 | 401 | 403 | 408 | 409 | 413 | 422 | 426 | 429 | 500 | 501 | 503;
  body: { error: string; message: string; [field: string]: unknown };
  retryAfterMs?: number;
}

/** An answer's Retry-After header value: whole seconds, at least 1 (undefined when it says no time). */
export function retryAfterHeader(answer: ErrorAnswer): string | undefined {
  return answer.retryAfterMs === undefined ? undefined : String(Math.max(1, Math.ceil(answer.retryAfterMs / 1000)));
}

/**
 * The one place where typed errors become HTTP statuses and bodies, for
 * every channel (an HTTP answer, a message on a wait socket).
 */
export function errorAnswer(err: unknown): ErrorAnswer {
  if ((err instanceof LockedError || err instanceof InProgressError) && err.current) {
    const { holder, expiresAt } = err.current;
    return {
      status: 409,
      body: { error: err.code, message: err.message, retryAfterMs: err.retryAfterMs, holder, expiresAt },
      retryAfterMs: err.retryAfterMs,
    };
  }
  if (err instanceof LockedError || err instanceof InProgressError) {
    return { status: 409, body: { error: err.code, message: err.message, retryAfterMs: err.retryAfterMs }, retryAfterMs: err.retryAfterMs };
  }
  if (err instanceof RateLimitedError) {
    return {
      status: 429,
      body: { error: err.code, message: err.message, retryAfterMs: err.retryAfterMs, limit: err.limit },
      retryAfterMs: err.retryAfterMs,
    };
  }
  const plain = (status: ErrorAnswer["status"], e: HoldfastError): ErrorAnswer => ({ status, body: { error: e.code, message: e.message } });
  if (err instanceof ConflictError) return plain(409, err);
  if (err instanceof LeaseLostError) return plain(409, err);
  if (err instanceof NotHeldError) return plain(409, err);
  if (err instanceof ForbiddenError) return { status: 403, body: { error: err.code, message: err.message, reason: err.reason } };
  if (err instanceof InvalidInputError) return plain(400, err);
  if (err instanceof UnauthorizedError) {
    return { status: 401, body: { error: err.code, message: err.message, ...(err.reason && { reason: err.reason }) } };
  }
  if (err instanceof TooLargeError) return plain(413, err);
  if (err instanceof UpgradeRequiredError) return plain(426, err);
  if (err instanceof SocketIdleError) return plain(408, err);
  if (err instanceof FingerprintMismatchError) return plain(422, err);
  if (err instanceof NotConfiguredError) return plain(503, err);
  if (err instanceof NotSupportedError) return plain(501, err);
  if (err instanceof StoreUnavailableError) {
    // What failed inside (a script, a Redis error text, an operation's internal name) is for
    // the operator's log, under an id the caller can quote; the caller gets what it can act on.
    const errorId = `err_${crypto.randomUUID()}`;
    console.warn(`store unavailable ${errorId}: ${err.message}`);
    return { status: 503, body: { error: err.code, message: err.said ?? STORE_UNAVAILABLE[err.outcome], outcome: err.outcome, errorId } };
  }
  if (err instanceof HoldfastError && !(err instanceof InternalError)) return plain(400, err);
  // A bug, not an outage: 500 with an id that is also in the log, so the two can be matched.
  const errorId = `err_${crypto.randomUUID()}`;
  logError(`internal error ${errorId}`, err);
  return { status: 500, body: { error: "internal", message: `an unexpected error occurred (${errorId})`, errorId } };
}
