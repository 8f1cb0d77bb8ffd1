/**
 * Retries a try-lock until it succeeds or the wait runs out, sleeping with
 * exponential backoff and full jitter, never past the holder's known expiry
 * nor past the deadline. Used by the library, which has no room to wait in;
 * the Worker's waiters are woken by their lock object instead. A busy attempt
 * may carry more than its retryAfterMs (who holds the lock): the last one is
 * answered as it came.
 */
export async function pollForGrant<T, Busy extends { done: false; retryAfterMs: number } = { done: false; retryAfterMs: number }>(
  waitMs: number,
  tryOnce: () => Promise<{ done: true; value: T } | Busy>,
  signal?: AbortSignal,
): Promise<{ done: true; value: T } | Busy> {
  const deadline = Date.now() + waitMs;
  let backoff = 25;
  for (;;) {
    const attempt = await tryOnce();
    const left = deadline - Date.now();
    if (attempt.done || left <= 0 || signal?.aborted) return attempt;
    const pause = Math.min(left, attempt.retryAfterMs, Math.random() * backoff + 5);
    await new Promise((r) => setTimeout(r, pause));
    backoff = Math.min(backoff * 2, 1000);
  }
}
