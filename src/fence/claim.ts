import { checkResource } from "./check.js";
import { FenceInputError } from "./errors.js";
import type { FenceClaimer } from "./types.js";

/**
 * Claim on grant: the resources a new lease's fence claims before its holder
 * gets the lease, so an older holder's late write is refused from the moment
 * the new lease begins, not from the new holder's first write.
 */
export interface ClaimOnGrant {
  /** The resources' fence helper (RedisFence, DurableObjectFence, a SQL one). */
  store: FenceClaimer;
  /** The resources to claim (1 or more), as the store names them. */
  resources: readonly string[];
}

/** Checks the option before anything is acquired, so a bad one takes no lock. */
export function checkClaimOnGrant(claim: ClaimOnGrant | undefined): ClaimOnGrant | undefined {
  if (claim === undefined) return undefined;
  if (claim === null || typeof claim !== "object" || typeof claim.store?.claim !== "function") {
    throw new FenceInputError("invalid_value", "claim.store", "claim.store must be a fence helper (it has claim(resource, fence))");
  }
  if (!Array.isArray(claim.resources) || claim.resources.length === 0) {
    throw new FenceInputError("invalid_resource", "claim.resources", "claim.resources must name at least one resource");
  }
  for (const [i, r] of claim.resources.entries()) checkResource(r, `claim.resources[${i}]`);
  return claim;
}

/**
 * Claims every resource with a new grant's fence (all at once: one round
 * trip of each). If any claim fails (a higher fence is already there, or the
 * resource cannot be reached), the grant is given back with `release` and the
 * error thrown: the caller never holds a lease its resources have not heard of.
 */
export async function claimOnGrant(claim: ClaimOnGrant | undefined, fence: number, release: () => Promise<unknown>): Promise<void> {
  if (claim === undefined) return;
  try {
    await Promise.all(claim.resources.map((r) => claim.store.claim(r, fence)));
  } catch (err) {
    await release().catch(() => {});
    throw err;
  }
}
