import { StoreUnavailableError } from "./errors";

/** Default bound on one store call, so a hung store becomes a 503 quickly. */
export const DEFAULT_STORE_TIMEOUT_MS = 2000;

/**
 * Races a store call against a timer. A call that times out may still land
 * later, so the error says its outcome is unknown; any other failure of the
 * call is reported the same way unless it is already typed.
 */
export async function withDeadline<T>(what: string, timeoutMs: number, call: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailableError(`the store did not answer ${what} within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([call(), timeout]);
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw err;
    const detail = err instanceof Error ? err.message : String(err);
    throw new StoreUnavailableError(`the store failed ${what}: ${detail.slice(0, 200)}`);
  } finally {
    clearTimeout(timer);
  }
}
