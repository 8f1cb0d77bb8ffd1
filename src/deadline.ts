import { StoreUnavailableError } from "./errors.js";

/** Default bound on one store call, so a hung store becomes a 503 quickly. */
export const DEFAULT_STORE_TIMEOUT_MS = 2000;

/** The bound on one store call in this deployment (STORE_TIMEOUT_MS when a positive whole number of ms, else the default). */
export function storeTimeoutMs(env: { STORE_TIMEOUT_MS?: string }): number {
  const ms = Number(env.STORE_TIMEOUT_MS);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : DEFAULT_STORE_TIMEOUT_MS;
}

/**
 * Races a call against a timer. A call that times out may still land later,
 * so its outcome is unknown. Failures of the call itself pass through as they
 * are: the caller classifies them (a store fault is not a bug).
 */
export function withDeadline<T>(what: string, timeoutMs: number, call: () => Promise<T>): Promise<T> {
  // One promise and one timer per call (not a race of two promises): this is on every store call's path.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StoreUnavailableError(`the store did not answer ${what} within ${timeoutMs} ms`, "unknown")),
      timeoutMs,
    );
    let pending: Promise<T>;
    try {
      pending = call();
    } catch (err) {
      clearTimeout(timer);
      reject(err);
      return;
    }
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
