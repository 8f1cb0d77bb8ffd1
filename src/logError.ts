/**
 * Logs a failure as one line of text: what failed, then the error's stack (or
 * message). One string, so a log reader (and the test runner's filter of
 * expected noise) sees the context and the error together.
 */
export function logError(what: string, err: unknown): void {
  console.error(`${what}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
}
