import { InternalError, StoreUnavailableError } from "../../errors.js";

/**
 * A Durable Object call that failed: the platform's own failures (object
 * overloaded, reset, connection lost: `retryable`/`overloaded`, or not thrown
 * by our code at all) are an outage; an exception our object code threw
 * (`remote` and not retryable) is a bug.
 */
export function classifyObjectFault(what: string, err: unknown): Error {
  if (err instanceof StoreUnavailableError || err instanceof InternalError) return err;
  const e = err as { message?: string; remote?: boolean; retryable?: boolean; overloaded?: boolean };
  const message = String(e?.message ?? err).slice(0, 300);
  if (e?.remote && !e.retryable && !e.overloaded) return new InternalError(`the lock object failed ${what}: ${message}`);
  return new StoreUnavailableError(`the lock object did not answer ${what}: ${message}`, "unknown");
}
