import { HoldfastError, InvalidInputError } from "../errors.js";

/**
 * The resource refused a write or a claim: it has already seen a higher fence
 * than this one, so the caller's lease was superseded (it paused, or lost the
 * lock). Nothing was written. `fence` is the one refused, `current` the
 * highest the resource has seen.
 */
export class StaleFenceError extends HoldfastError {
  override name = "StaleFenceError";
  constructor(
    readonly resource: string,
    readonly fence: number,
    readonly current: number,
  ) {
    super("stale_fence", `fence ${fence} is stale for resource ${JSON.stringify(resource)}: it has seen fence ${current}`);
  }
}

/** What a fence helper refuses before it writes anything: the code names the problem, `field` the argument. */
export type FenceInputCode = "invalid_fence" | "invalid_resource" | "invalid_value" | "corrupt_fence";

/**
 * Bad input to a fence helper (a fence that is not a safe non-negative
 * integer, an empty or oversized resource name, a value the resource cannot
 * hold), or a stored fence that is not a fence (corrupt_fence: the resource is
 * refused, never overwritten). Nothing was written.
 */
export class FenceInputError extends InvalidInputError {
  override name = "FenceInputError";
  declare readonly code: FenceInputCode;
  constructor(
    code: FenceInputCode,
    readonly field: string,
    message: string,
  ) {
    super(code, message);
  }
}
