/**
 * holdfast/client: the service's TypeScript client. Leases heartbeated for
 * you with a signal that says when one is lost, typed errors, retries that
 * apply once, and leases that travel (toJSON / resume). No Node built-ins:
 * it runs wherever fetch runs.
 */
export { HoldfastClient } from "./HoldfastClient.js";
export type {
  HoldfastClientOptions,
  LockOptions,
  SemaphoreOptions,
  SlotOptions,
  BeginOptions,
  BeginResult,
  RunOnceOptions,
  WaitNotice,
} from "./clientOptions.js";
export { Lease, type LeaseHandle, type LeaseKind } from "./lease.js";
export {
  Operator,
  type ListOptions,
  type LockPage,
  type ForceReleaseOptions,
  type ForceReleaseResult,
  type AuditEntry,
} from "./operator.js";
export { REQUEST_ID_HEADER } from "./transport.js";
export type { WaitChannel } from "./socketWait.js";
export { LockWatch, type LockState } from "./watch.js";
export { type ElectionChange, ElectionObserver } from "./watch.js";
export { Leadership } from "./grants.js";
export { verifyNotification, type ExpiryNotification, type VerifyOptions, SIGNATURE_HEADER } from "../wire/signature.js";
export { signScopedToken, type SignScopedTokenOptions, type TokenOperation, TOKEN_OPERATIONS } from "../wire/scopedToken.js";
export {
  HoldfastClientError,
  RetryLaterError,
  LockedError,
  LeaseLostError,
  LeaseReleasedError,
  InProgressError,
  ConflictError,
  FingerprintMismatchError,
  ForbiddenError,
  InvalidRequestError,
  UnauthorizedError,
  RateLimitedError,
  StoreUnavailableError,
  NotConfiguredError,
  NotSupportedError,
  ServerError,
  UnreachableError,
} from "./errors.js";
