import { HoldfastError, StoreUnavailableError } from "../../errors.js";
import { logError } from "../../logError.js";

/**
 * A wait that threw, as its answer: the store not answering is said as a
 * result (errors lose their type on the way back to the Worker), anything
 * else is a bug, logged here and answered as internal.
 */
export function waitFault(
  what: string,
  err: unknown,
): { status: "unavailable"; message: string; outcome: "unknown" | "not_applied" } | { status: "internal"; message: string } {
  if (err instanceof StoreUnavailableError) return { status: "unavailable", message: err.message, outcome: err.outcome };
  logError(what, err);
  return { status: "internal", message: err instanceof HoldfastError ? err.message : String((err as Error)?.message ?? err) };
}
