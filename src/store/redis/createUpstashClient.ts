import { Redis } from "@upstash/redis/cloudflare";

/**
 * The Upstash client the Worker uses. Retries after network errors are kept
 * short (our scripts are safe to repeat), each attempt is aborted at the
 * store deadline, and replies are left as Redis sent them.
 */
export function createUpstashClient(url: string, token: string, timeoutMs: number): Redis {
  return new Redis({
    url,
    token,
    automaticDeserialization: false,
    enableTelemetry: false,
    retry: { retries: 2, backoff: (n) => 25 * 2 ** n + Math.random() * 25 },
    signal: () => AbortSignal.timeout(timeoutMs),
  });
}
