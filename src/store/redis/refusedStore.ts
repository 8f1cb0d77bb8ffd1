import type { Redis } from "@upstash/redis";
import { StoreUnavailableError } from "../../errors.js";
import { isRefusedConnection } from "../../wire/refusedConnection.js";

/**
 * Clients whose network errors come back within a fraction of a second
 * (createUpstashClient's: two retries, 25-100 ms apart). Any other client,
 * typically one a library user made with @upstash/redis's defaults, retries a
 * refused connection five times over about four seconds, past the store's
 * deadline, and its last error never reaches us: for those, a call still
 * unanswered after PROBE_AFTER_MS asks whether anything listens at the URL.
 */
export const failsFast = new WeakSet<object>();

/** Past this without an answer a call to a slow-failing client probes its URL once. A store that answers takes far less. */
const PROBE_AFTER_MS = 250;

/** The URL an @upstash/redis client sends to (its HttpClient's baseUrl), when it says. */
export function storeUrlOf(redis: Redis): string | undefined {
  const url = (redis as unknown as { client?: { baseUrl?: unknown } }).client?.baseUrl;
  return typeof url === "string" && url !== "" ? url : undefined;
}

/** What a caller is told when nothing listens at the store's URL: the URL and the cause, never a slow-store timeout. */
export function refusedStoreError(url: string | undefined, what: string): StoreUnavailableError {
  // A retried call may have reached Redis on an earlier attempt, so the outcome stays unknown.
  return new StoreUnavailableError(
    `the store at ${url ?? "its URL"} refused the connection for ${what} (connection refused: nothing listens there; is Redis's REST endpoint up, and UPSTASH_REDIS_REST_URL right?)`,
    "unknown",
  );
}

/**
 * The call, failed as soon as a probe finds its store's address refusing
 * connections (a HEAD request, made only while the call is still pending
 * after PROBE_AFTER_MS, and only for clients not in failsFast). A probe that
 * gets any answer, or fails otherwise, changes nothing: the call runs on to
 * its deadline.
 */
export function failWhenRefused<T>(redis: Redis, what: string, call: Promise<T>): Promise<T> {
  const url = failsFast.has(redis) ? undefined : storeUrlOf(redis);
  if (!url) return call;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      fetch(url, { method: "HEAD", signal: AbortSignal.timeout(1000) }).then(
        (res) => res.body?.cancel(),
        (err: unknown) => {
          if (settled || !isRefusedConnection(err)) return;
          settled = true;
          reject(refusedStoreError(url, what));
        },
      );
    }, PROBE_AFTER_MS);
    call.then(
      (value) => {
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        settled = true;
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
