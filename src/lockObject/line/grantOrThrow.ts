import { ConflictError, InternalError, LeaseLostError, LockedError, RateLimitedError, StoreUnavailableError } from "../../errors.js";
import type { WaitOutcome } from "./waitProtocol.js";

/** The grant of a lock object's answer, or the typed error its refusal stands for. */
export function grantOrThrow<Grant>(outcome: WaitOutcome<Grant>): Grant {
  switch (outcome.status) {
    case "granted":
      return outcome.grant;
    case "locked":
      throw new LockedError(outcome.retryAfterMs, undefined, outcome.current);
    case "lost":
      throw new LeaseLostError();
    case "refused":
      throw new ConflictError(outcome.code, outcome.message);
    case "unavailable":
      throw new StoreUnavailableError(outcome.message, outcome.outcome);
    case "crowded":
      throw new RateLimitedError(outcome.retryAfterMs, outcome.message, "waiters_per_lock");
    case "internal":
      throw new InternalError(outcome.message);
  }
}
