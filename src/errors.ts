/**
 * Typed errors shared by the stores, the primitives and the HTTP layer.
 * `http/errorResponse.ts` is the one place that maps them to statuses.
 */
export class HoldfastError extends Error {
  /**
   * Each class names itself: the Worker's bundle is minified without esbuild's keepNames
   * (wrangler.toml), so a class's own name there is not the one written here.
   */
  override name = "HoldfastError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The lock is held by someone else and was not granted within waitMs; `current`: who holds it, when the store said. */
export class LockedError extends HoldfastError {
  override name = "LockedError";
  constructor(
    readonly retryAfterMs: number,
    message = "the lock is held by someone else",
    readonly current?: CurrentHolder,
  ) {
    super("locked", message);
  }
}

/** The token does not hold the lease (expired, released, or never held). */
export class LeaseLostError extends HoldfastError {
  override name = "LeaseLostError";
  constructor(message = "this token no longer holds the lease") {
    super("lease_lost", message);
  }
}

/**
 * Too much at once, come back later (429, Retry-After): the namespace spent
 * its request budget for this window, or a cap on waiters or sockets is
 * reached, or one socket sends faster than it may. `limit` says which; the
 * code stays `rate_limited` for all of them, so a client retries them alike.
 */
export class RateLimitedError extends HoldfastError {
  override name = "RateLimitedError";
  constructor(
    readonly retryAfterMs: number,
    message: string,
    readonly limit: "budget" | "waiters_per_lock" | "sockets_per_namespace" | "socket_messages" | "socket_flood" | "socket_rate" = "budget",
  ) {
    super("rate_limited", message);
  }
}

/** A key is being worked on by another owner (HTTP 409 in_progress). */
export class InProgressError extends HoldfastError {
  override name = "InProgressError";
  constructor(
    readonly retryAfterMs: number,
    message = "this key is being processed by another request",
    /** Who works on it (its label, if it gave one) and until when. */
    readonly current?: CurrentHolder,
  ) {
    super("in_progress", message);
  }
}

/** A key was reused with a different request fingerprint (HTTP 422). */
export class FingerprintMismatchError extends HoldfastError {
  override name = "FingerprintMismatchError";
  constructor(message = "this key was used with a different request fingerprint") {
    super("fingerprint_mismatch", message);
  }
}

/**
 * The request can never be granted as asked, whatever the wait: an
 * acquire whose limit differs from the holders' (limit_mismatch), a read
 * lock asking to become a write lock (upgrade_not_supported).
 */
export class ConflictError extends HoldfastError {
  override name = "ConflictError";
}

/**
 * The key may not do this (HTTP 403 forbidden): a force release needs an
 * admin key (`reason` role); a scoped token allows neither this operation
 * (operation) nor this name (name); a wait socket from an origin
 * CORS_ORIGINS does not list for the key's namespace (origin).
 */
export class ForbiddenError extends HoldfastError {
  override name = "ForbiddenError";
  constructor(
    message: string,
    readonly reason: "role" | "operation" | "name" | "origin" = "role",
  ) {
    super("forbidden", message);
  }
}

/** A force release found nobody holding the lock (or no holder with that label): HTTP 409 not_held, nothing changed. */
export class NotHeldError extends HoldfastError {
  override name = "NotHeldError";
  constructor(message: string) {
    super("not_held", message);
  }
}

/** A body or stored response is over the size limit. */
export class TooLargeError extends HoldfastError {
  override name = "TooLargeError";
  constructor(message = "the body is over 64 KiB") {
    super("too_large", message);
  }
}

/** Bad input: the code names the field or rule (invalid_ttl, invalid_name, ...). Nothing was changed. */
export class InvalidInputError extends HoldfastError {
  override name = "InvalidInputError";
  constructor(code: string, message: string) {
    super(code, message);
  }
}

/**
 * The store did not answer in time, could not be reached, or refused the
 * write. `outcome` says whether a write may have been applied: "unknown" when
 * a request was sent but its answer never came, "not_applied" when it surely
 * was not. `said`, where set, is what the caller is told instead of the
 * outcome's usual sentence (a store that refused the write says so).
 */
export class StoreUnavailableError extends HoldfastError {
  override name = "StoreUnavailableError";
  constructor(
    message: string,
    readonly outcome: "unknown" | "not_applied" = "unknown",
    readonly said?: string,
  ) {
    super("store_unavailable", message);
  }
}

/**
 * A bug: the store rejected a command (a Lua error), a reply did not have the
 * shape we wrote, or our own code threw. Answered 500 with an id that is also
 * logged, never disguised as an outage.
 */
export class InternalError extends HoldfastError {
  override name = "InternalError";
  constructor(message: string) {
    super("internal", message);
  }
}

/**
 * The configured store does not offer this lock kind (a quorum of Redis
 * databases offers fewer kinds; see docs/guarantees.md). Answered 501:
 * retrying will not help, another deployment might.
 */
export class NotSupportedError extends HoldfastError {
  override name = "NotSupportedError";
  constructor(message: string) {
    super("not_supported", message);
  }
}

/** The service's own configuration is missing or wrong (API_KEYS, the store settings...): 503 until an operator fixes it. */
export class NotConfiguredError extends HoldfastError {
  override name = "NotConfiguredError";
  constructor(message: string) {
    super("not_configured", message);
  }
}

/** A wait socket was asked for without a WebSocket upgrade (HTTP 426). */
export class UpgradeRequiredError extends HoldfastError {
  override name = "UpgradeRequiredError";
  /**
   * `instead`: how to do without the socket. A watch path's answer offers the one-time read (a watcher sent to
   * POST .../acquire would take the lock it meant to watch); a wait path's, its kind's way (a lock's acquire).
   */
  constructor(socket: "wait" | "watch" = "wait", instead?: string) {
    const otherwise =
      instead ?? (socket === "watch" ? "read the state once with GET on the same path without /watch" : "wait over HTTP with POST .../acquire");
    super("upgrade_required", `this path is a ${socket} socket: open it as a WebSocket (Upgrade: websocket), or ${otherwise}`);
  }
}

/** A wait socket that did not do its part in time (no acquire or watch, no heartbeat before its lease's end): closed (408 on the socket). */
export class SocketIdleError extends HoldfastError {
  override name = "SocketIdleError";
  constructor(message: string) {
    super("socket_idle", message);
  }
}

/** A missing or unknown API key, or a scoped token that is expired (`reason` token_expired) or not this service's (bad_token): HTTP 401. */
export class UnauthorizedError extends HoldfastError {
  override name = "UnauthorizedError";
  constructor(
    message = "a valid API key is required: Authorization: Bearer <key>",
    readonly reason?: "token_expired" | "bad_token",
  ) {
    super("unauthorized", message);
  }
}

/**
 * Who holds a lock now, as a busy answer tells it: the holder's label (null
 * when it gave none) and when its lease ends (store time). A 409 `locked`
 * carries it, so a caller turned away can say who is in the way.
 */
export interface CurrentHolder {
  holder: string | null;
  expiresAt: number;
}
