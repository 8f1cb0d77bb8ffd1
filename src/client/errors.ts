/**
 * The client's typed errors. Every error the service answers becomes one of
 * these, carrying the server's `code`, `message` and HTTP `status`; failures
 * to reach the service become UnreachableError. `errorFromResponse` is the
 * one place that maps answers to classes.
 */
export class HoldfastClientError extends Error {
  constructor(
    /** The service's error code (`locked`, `lease_lost`, ...), or the client's own (`unreachable`). */
    readonly code: string,
    message: string,
    /** The HTTP status, or 0 when no answer came. */
    readonly status: number,
    /** The whole error body the service sent. */
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** An answer that says when to try again (`retryAfterMs`, from the body or Retry-After). */
export class RetryLaterError extends HoldfastClientError {
  constructor(
    code: string,
    readonly retryAfterMs: number,
    message: string,
    status: number,
    body: Record<string, unknown> = {},
  ) {
    super(code, message, status, body);
  }
}

/** Not acquired within waitMs: someone else holds it. Try again after `retryAfterMs`. */
export class LockedError extends RetryLaterError {
  constructor(retryAfterMs: number, message: string, body: Record<string, unknown> = {}) {
    super("locked", retryAfterMs, message, 409, body);
  }
}

/**
 * The lease is gone, or may be. `confirmed`: the service said this token no
 * longer holds it (409 lease_lost); false when the client aborted because no
 * heartbeat was confirmed before the lease's local deadline.
 */
export class LeaseLostError extends HoldfastClientError {
  constructor(
    message: string,
    readonly confirmed = true,
    body: Record<string, unknown> = {},
  ) {
    super("lease_lost", message, confirmed ? 409 : 0, body);
  }
}

/** The lease was released by its holder: the reason its signal aborts after release(). */
export class LeaseReleasedError extends HoldfastClientError {
  constructor() {
    super("released", "the lease was released", 0);
  }
}

/** An idempotency key is being run by someone else now. */
export class InProgressError extends RetryLaterError {
  constructor(retryAfterMs: number, message: string, body: Record<string, unknown> = {}) {
    super("in_progress", retryAfterMs, message, 409, body);
  }
}

/** The request can never succeed as asked: `upgrade_not_supported`, `limit_mismatch`. */
export class ConflictError extends HoldfastClientError {}

/** The idempotency key was used with a different fingerprint. */
export class FingerprintMismatchError extends HoldfastClientError {}

/** 403 forbidden: this key's role may not do that (a force release needs an admin key). */
export class ForbiddenError extends HoldfastClientError {}

/** Bad input (400, 413): `code` names the field (`invalid_ttl`, `invalid_name`, ...). Nothing was changed. */
export class InvalidRequestError extends HoldfastClientError {}

/** The API key is missing or unknown. */
export class UnauthorizedError extends HoldfastClientError {}

/** Too many requests for this key: retried by the client until its deadline, then thrown. */
export class RateLimitedError extends RetryLaterError {
  constructor(retryAfterMs: number, message: string, body: Record<string, unknown> = {}) {
    super("rate_limited", retryAfterMs, message, 429, body);
  }
}

/**
 * The service's store did not answer (503). `outcome` "unknown": a write may
 * have been applied; "not_applied": it surely was not. Retried by the client
 * (writes carry a request id, so a retry applies once) until its deadline.
 */
export class StoreUnavailableError extends HoldfastClientError {
  readonly outcome: "unknown" | "not_applied";
  constructor(message: string, body: Record<string, unknown> = {}) {
    super("store_unavailable", message, 503, body);
    this.outcome = body.outcome === "not_applied" ? "not_applied" : "unknown";
  }
}

/** The service is not set up to serve (no API keys, a store configured wrong). */
export class NotConfiguredError extends HoldfastClientError {}

/** The service's store does not offer this lock kind (501: a quorum offers the mutex only). */
export class NotSupportedError extends HoldfastClientError {}

/** A bug in the service (500): `errorId` matches its log. */
export class ServerError extends HoldfastClientError {
  get errorId(): string | undefined {
    return typeof this.body.errorId === "string" ? this.body.errorId : undefined;
  }
}

/** No answer came from the service before the deadline (network error, timeout, closed port). */
export class UnreachableError extends HoldfastClientError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("unreachable", message, 0);
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** The client's error for one answer of the service. */
export function errorFromResponse(status: number, body: Record<string, unknown>, retryAfterHeader: string | null): HoldfastClientError {
  const code = typeof body.error === "string" ? body.error : `http_${status}`;
  const message = typeof body.message === "string" ? body.message : `the service answered ${status}`;
  const retryAfterMs =
    typeof body.retryAfterMs === "number" ? body.retryAfterMs : retryAfterHeader ? Math.max(0, Number(retryAfterHeader) * 1000 || 0) : 1000;
  switch (code) {
    case "locked":
      return new LockedError(retryAfterMs, message, body);
    case "lease_lost":
      return new LeaseLostError(message, true, body);
    case "in_progress":
      return new InProgressError(retryAfterMs, message, body);
    case "rate_limited":
      return new RateLimitedError(retryAfterMs, message, body);
    case "store_unavailable":
      return new StoreUnavailableError(message, body);
    case "not_configured":
      return new NotConfiguredError(code, message, status, body);
    case "not_supported":
      return new NotSupportedError(code, message, status, body);
    case "fingerprint_mismatch":
      return new FingerprintMismatchError(code, message, status, body);
    case "unauthorized":
      return new UnauthorizedError(code, message, status, body);
    case "forbidden":
      return new ForbiddenError(code, message, status, body);
  }
  if (status === 409) return new ConflictError(code, message, status, body);
  if (status >= 400 && status < 500) return new InvalidRequestError(code, message, status, body);
  return new ServerError(code, message, status, body);
}
