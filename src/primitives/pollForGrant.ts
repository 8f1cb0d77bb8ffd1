/**
 * Retries a try-lock until it succeeds or the wait runs out, sleeping with
 * exponential backoff and full jitter, never past the holder's known expiry
 * nor past the deadline. Used by the library, which has no room to wait in;
 * the Worker's waiters are woken by their LockRoom instead.
 */
export async function pollForGrant<T>(
  waitMs: number,
  tryOnce: () => Promise<{ done: true; value: T } | { done: false; retryAfterMs: number }>,
  signal?: AbortSignal,
): Promise<{ done: true; value: T } | { done: false; retryAfterMs: number }> {
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
