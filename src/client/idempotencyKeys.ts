import * as shared from "../errors.js";
import { HoldfastClientError, InvalidRequestError, RetryLaterError, StoreUnavailableError } from "./errors.js";
import { writeOrGiveBack } from "./grants.js";
import { keyPath } from "./keyRuns.js";
import type { LeaseHost } from "./lease.js";

/**
 * A service's idempotency keys step by step, by token, for `idempotent()` (holdfast): its rules
 * (src/library/idempotent/answerOnce.ts) begin, heartbeat, complete and fail a key here as they do on Redis,
 * so the wrapper behaves the same over either. Its errors are the library's (src/errors.ts, the
 * layer both sides share), which the rules answer as they answer Redis's.
 */
export interface ServiceKeys {
  /** One begin, no wait: `started` with the token, or `completed` with the stored response. */
  begin(
    key: string,
    options: { ttlMs: number; retainMs?: number; fingerprint?: string },
  ): Promise<
    | { state: "started"; token: string; fence: number; ttlMs: number; expiresAt: number }
    | { state: "completed"; response: unknown; completedAt: number; fence: number }
  >;
  /** Moves the key's deadline to the begin's ttlMs from the service's now. */
  heartbeat(key: string, token: string): Promise<{ expiresAt: number }>;
  complete(key: string, token: string, response: unknown): Promise<{ completedAt: number }>;
  fail(key: string, token: string): Promise<void>;
}

type BeginAnswer = { state: string; token?: string; fence: number; ttlMs?: number; expiresAt?: number; response?: unknown; completedAt?: number };

/** The keys of the service `host` talks to (HoldfastClient#idempotencyKeys()). */
export function serviceKeys(host: LeaseHost): ServiceKeys {
  // The path made inside the chain: a key the client refuses (keyPath) is answered as the service's refusals are.
  const write = <R>(key: string, op: string, body: Record<string, unknown>) =>
    Promise.resolve()
      .then(() => host.transport.write<R>(keyPath(key, op), body, { deadline: Date.now() + host.timeoutMs }))
      .catch(rethrowShared);
  return {
    async begin(key, options) {
      const body = { ttlMs: options.ttlMs, retainMs: options.retainMs, fingerprint: options.fingerprint };
      const what = { kind: "idempotency" as const, name: key };
      const r = await Promise.resolve()
        .then(() => writeOrGiveBack<BeginAnswer>(host, what, keyPath(key, "begin"), body, Date.now() + host.timeoutMs, undefined))
        .catch(rethrowShared);
      if (r.state === "completed") return { state: "completed", response: r.response, completedAt: r.completedAt as number, fence: r.fence };
      return { state: "started", token: r.token as string, fence: r.fence, ttlMs: r.ttlMs as number, expiresAt: r.expiresAt as number };
    },
    heartbeat: (key, token) => write(key, "heartbeat", { token }),
    complete: (key, token, response) => write(key, "complete", { token, response: response === undefined ? null : response }),
    fail: async (key, token) => {
      await write(key, "fail", { token });
    },
  };
}

/**
 * A client error as the library's: the rules' own answers (in_progress, fingerprint_mismatch,
 * lease_lost, a bad key, rate_limited) keep their code; a refused API key, or a service not set up,
 * is a configuration to fix (503 not_configured, as Redis refusing its token is); anything else that
 * kept the service from answering (unreachable, its store down, a 5xx) is the store being
 * unavailable: 503 to the caller, whose retry comes later, and the reason in the operator's log.
 */
function rethrowShared(err: unknown): never {
  if (!(err instanceof HoldfastClientError)) throw err;
  const retryAfterMs = err instanceof RetryLaterError ? err.retryAfterMs : 1000;
  const { holder, expiresAt } = err.body;
  switch (err.code) {
    case "in_progress": {
      const current = typeof expiresAt === "number" ? { holder: typeof holder === "string" ? holder : null, expiresAt } : undefined;
      throw new shared.InProgressError(retryAfterMs, err.message, current);
    }
    case "fingerprint_mismatch":
      throw new shared.FingerprintMismatchError(err.message);
    case "lease_lost":
      throw new shared.LeaseLostError(err.message);
    case "rate_limited":
      throw new shared.RateLimitedError(retryAfterMs, err.message);
    case "too_large":
      throw new shared.TooLargeError(err.message);
    case "unauthorized":
    case "forbidden":
    case "not_configured":
      throw new shared.NotConfiguredError(`the holdfast service refused this client (${err.code}): check its baseUrl and apiKey (${err.message})`);
  }
  if (err instanceof InvalidRequestError) throw new shared.InvalidInputError(err.code, err.message);
  const outcome = err instanceof StoreUnavailableError && err.outcome === "not_applied" ? "not_applied" : "unknown";
  throw new shared.StoreUnavailableError(`the holdfast service did not answer as asked (${err.code}, ${err.status}): ${err.message}`, outcome);
}
