/**
 * Counts the HTTP requests this Node process sends, per origin, by wrapping
 * globalThis.fetch. @upstash/redis looks fetch up at call time, so installing
 * the wrapper before the first request is enough. Requests made inside
 * workerd are not seen here (see redisInfo.ts for those).
 */
const originalFetch: typeof fetch = globalThis.fetch.bind(globalThis);

const started = new Map<string, number>();
const completed = new Map<string, number>();
let installed = false;

/** fetch without counting: for the bench's own bookkeeping requests. */
export const rawFetch: typeof fetch = originalFetch;

export function installFetchCounter(): void {
  if (installed) return;
  installed = true;
  globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const origin = originOf(input);
    started.set(origin, (started.get(origin) ?? 0) + 1);
    try {
      return await originalFetch(input, init);
    } finally {
      completed.set(origin, (completed.get(origin) ?? 0) + 1);
    }
  }) as typeof fetch;
}

/** Requests sent so far to the origin of url. */
export function requestsTo(url: string): number {
  return started.get(new URL(url).origin) ?? 0;
}

/** Requests to the origin of url whose response (or error) has arrived. */
export function answeredFrom(url: string): number {
  return completed.get(new URL(url).origin) ?? 0;
}

function originOf(input: Parameters<typeof fetch>[0]): string {
  try {
    if (typeof input === "string") return new URL(input).origin;
    if (input instanceof URL) return input.origin;
    return new URL(input.url).origin;
  } catch {
    return "?";
  }
}
