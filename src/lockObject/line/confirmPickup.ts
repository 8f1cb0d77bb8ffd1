import { LeaseLostError } from "../../errors.js";

/**
 * The confirmation that a grant from the line reached its client: told to
 * the lock object, or, when the object cannot be reached, marked in the
 * store by a heartbeat (which clears the grant's pickup mark), so the
 * object's take-back leaves it alone either way.
 */
export function confirmPickup(
  object: { pickedUp(token: string): Promise<unknown> },
  token: string,
  heartbeat: () => Promise<{ status: "ok" | "lost" }>,
) {
  return async () => {
    try {
      await object.pickedUp(token);
    } catch {
      const r = await heartbeat();
      if (r.status === "lost") throw new LeaseLostError("the grant was gone before its delivery could be confirmed");
    }
  };
}
