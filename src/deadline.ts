import { StoreUnavailableError } from "./errors.js";

/** Default bound on one store call, so a hung store becomes a 503 quickly. */
export const DEFAULT_STORE_TIMEOUT_MS = 2000;

/**
 * Races a call against a timer. A call that times out may still land later,
 * so its outcome is unknown. Failures of the call itself pass through as they
 * are: the caller classifies them (a store fault is not a bug).
 */
export async function withDeadline<T>(what: string, timeoutMs: number, call: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailableError(`the store did not answer ${what} within ${timeoutMs} ms`, "unknown")), timeoutMs);
  });
  try {
    return await Promise.race([call(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
