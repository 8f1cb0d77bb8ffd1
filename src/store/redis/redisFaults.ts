import { HoldfastError, InternalError, NotConfiguredError, StoreUnavailableError } from "../../errors.js";
import { isRefusedConnection } from "../../wire/refusedConnection.js";
import { refusedStoreError } from "./refusedStore.js";

/** What a caller is told when Redis refused a write for want of memory. */
const STORE_FULL = "the store refused the write: it is out of memory (Redis maxmemory), so nothing was changed; retry once the store has room";

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
 * - Redis out of memory: it refused the write, nothing applied, said at once.
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
  // Redis at its memory limit (maxmemory, noeviction) refuses a script before its first write, so nothing was
  // applied; that is said at once, not as a store that did not answer. A no-flags script is refused at its first
  // write that could grow memory, and never after one: Redis does not stop a script half way (scriptVerifyOOM).
  if (/^(Command failed: )?-?OOM\b/.test(message)) {
    return new StoreUnavailableError(`the store refused ${what}: ${detail}`, "not_applied", STORE_FULL);
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
