/**
 * Whether a failed fetch was a refused connection: nothing listens at the
 * address, so no retry soon will find anyone there, unlike a timeout or a
 * 5xx. Each runtime says it its own way: Node's undici a cause with code
 * ECONNREFUSED (an AggregateError's when a name resolves to two addresses),
 * Bun the code on the error itself, Deno "Connection refused (os error 111)"
 * in its cause's text. Browsers say nothing of the kind ("Failed to fetch"),
 * so there this answers false and the caller treats it as any network error.
 */
export function isRefusedConnection(err: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [err];
  while (pending.length > 0) {
    const e = pending.pop();
    if (typeof e !== "object" || e === null || seen.has(e)) continue;
    seen.add(e);
    const { code, message, cause, errors } = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (code === "ECONNREFUSED" || code === "ConnectionRefused") return true;
    if (typeof message === "string" && /ECONNREFUSED|connection refused/i.test(message)) return true;
    pending.push(cause);
    if (Array.isArray(errors)) pending.push(...errors);
  }
  return false;
}
