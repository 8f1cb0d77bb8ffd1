import { HoldfastError, InternalError, StoreUnavailableError } from "../../errors.js";

/**
 * Sorts what a Redis call threw into an outage (503) or a bug (500).
 *
 * - Redis rejected the command itself (a Lua error, a wrong type): a bug in
 *   our scripts or their arguments. @upstash/redis reports these as an
 *   UpstashError whose text is Redis's own, starting with ERR or WRONGTYPE
 *   (after "Command failed: " when it comes from a script).
 * - Redis busy, loading, read-only or out of memory, Upstash or the network
 *   failing or over quota, our deadline passing: an outage. Refused
 *   credentials surely applied nothing; anything else may have.
 */
export function classifyRedisFault(what: string, err: unknown): HoldfastError {
  if (err instanceof HoldfastError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : "";
  const detail = `${message}${cause}`.slice(0, 300);
  const outage = /connect|connection|limit exceeded|max (daily )?requests?/i.test(message); // Upstash quotas speak as ERR too
  if (isUpstashError(err) && /^(Command failed: )?(ERR|WRONGTYPE|NOSCRIPT)\b/.test(message) && !outage) {
    return new InternalError(`the store rejected ${what}: ${detail}`);
  }
  // Refused credentials surely applied nothing. A refused connection may follow an
  // attempt that did reach Redis (the client retries), so it stays unknown.
  const refused = /Unauthorized|WRONGPASS|NOAUTH/i.test(detail);
  return new StoreUnavailableError(`the store failed ${what}: ${detail}`, refused ? "not_applied" : "unknown");
}

function isUpstashError(err: unknown): boolean {
  return err instanceof Error && err.name === "UpstashError";
}
