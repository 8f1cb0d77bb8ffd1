import { HoldfastError, InternalError, NotConfiguredError, StoreUnavailableError } from "../../errors.js";
import { isRefusedConnection } from "../../wire/refusedConnection.js";
import { refusedStoreError } from "./refusedStore.js";

/**
 * Sorts what a Redis call threw into an outage (503) or a bug (500).
 *
 * - Redis rejected the command itself (a Lua error, a wrong type): a bug in
 *   our scripts or their arguments. @upstash/redis reports these as an
 *   UpstashError whose text is Redis's own, starting with ERR or WRONGTYPE
 *   (after "Command failed: " when it comes from a script).
 * - Redis busy, loading, read-only or out of memory, Upstash or the network
 *   failing or over quota, our deadline passing: an outage, which may have
 *   applied the write.
 * - Refused credentials (a wrong token): not configured, nothing applied.
 * - A refused connection (nothing listens at `url`): an outage, said as such
 *   with the URL, not as a store too slow to answer.
 */
export function classifyRedisFault(what: string, err: unknown, url?: string): HoldfastError {
  if (err instanceof HoldfastError) return err;
  if (isRefusedConnection(err)) return refusedStoreError(url, what);
  // @upstash/redis ends its errors with the command it sent (a script's keys and arguments, owner tokens among
  // them): never passed on, to a caller or to a log.
  const message = (err instanceof Error ? err.message : String(err)).replace(/,? command was: [\s\S]*$/, "");
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : "";
  const detail = `${message}${cause}`.slice(0, 300);
  // Refused credentials are a configuration to fix, not an outage to wait out; they surely applied nothing.
  if (/^Unauthorized\b|WRONGPASS|NOAUTH/i.test(message)) {
    return new NotConfiguredError(
      `the store refused its credentials for ${what} (${message.slice(0, 80)}): check the Redis client's token (UPSTASH_REDIS_REST_TOKEN)`,
    );
  }
  const outage = /connect|connection|limit exceeded|max (daily )?requests?/i.test(message); // Upstash quotas speak as ERR too
  if (isUpstashError(err) && /^(Command failed: )?(ERR|WRONGTYPE|NOSCRIPT)\b/.test(message) && !outage) {
    return new InternalError(`the store rejected ${what}: ${detail}`);
  }
  // A refused connection may follow an attempt that did reach Redis (the client retries), so it stays unknown.
  return new StoreUnavailableError(`the store failed ${what}: ${detail}`, "unknown");
}

function isUpstashError(err: unknown): boolean {
  return err instanceof Error && err.name === "UpstashError";
}
