import type { Redis } from "@upstash/redis";
import type { Context, MiddlewareHandler } from "hono";
import { HoldfastError } from "../errors.js";
import { errorResponse } from "../http/errorResponse.js";
import { Idempotency } from "../library/Idempotency.js";
import { answerOnce, keptHeaders, requestFingerprint } from "../library/idempotent/answerOnce.js";
import type { LockStore } from "../store/types.js";

export interface IdempotencyMiddlewareOptions {
  /** Where keys live: a store or an @upstash/redis client (one of the two). */
  store?: LockStore;
  redis?: Redis;
  namespace?: string;
  /** The request's key; none means the handler just runs. Default: the Idempotency-Key header. */
  key?: (c: Context) => string | undefined | Promise<string | undefined>;
  /** The handler must answer within this; it is heartbeated every ttlMs/3 while it runs. */
  ttlMs: number;
  /** How long the response is kept for replays (default one day). */
  retainMs?: number;
  /** Identifies the request; default SHA-256 hex of method, path (with query) and body. */
  fingerprint?: (c: Context, bodyText: string) => Promise<string> | string;
  /** Response headers to replay besides content-type and location. */
  keepHeaders?: string[];
}

/**
 * Hono middleware that runs a handler once per idempotency key: a retried
 * request (a webhook redelivery, a client retry) gets the first response
 * again with `Idempotent-Replayed: true` instead of running the handler
 * twice; one that overlaps the first gets 409 in_progress, one that reuses
 * the key for a different request 422 fingerprint_mismatch. A handler that
 * throws or answers 5xx fails the key, so the sender's retry can run it.
 * The rules are the library's, once (src/library/idempotent/answerOnce.ts); this adapts
 * them to Hono's context, as `idempotent()` does to a fetch handler.
 */
export function idempotency(options: IdempotencyMiddlewareOptions): MiddlewareHandler {
  const backend = options.store ?? options.redis;
  if (!backend) throw new TypeError("idempotency() needs a redis client or a store");
  const idem = new Idempotency(backend, { namespace: options.namespace });
  const keyOf = options.key ?? ((c: Context) => c.req.header("Idempotency-Key") || undefined);
  const fingerprintOf = options.fingerprint ?? ((c: Context, body: string) => requestFingerprint(c.req.method, c.req.url, body));
  const rules = { ttlMs: options.ttlMs, retainMs: options.retainMs, keep: keptHeaders(options.keepHeaders) };

  return async (c, next) => {
    const key = await keyOf(c);
    if (key === undefined) return next();
    let fingerprint: string;
    try {
      fingerprint = await fingerprintOf(c, await c.req.text());
    } catch (err) {
      if (err instanceof HoldfastError) return errorResponse(c, err);
      throw err;
    }
    const answered = await answerOnce(idem, rules, {
      key,
      fingerprint,
      answerError: (err) => errorResponse(c, err),
      run: async () => {
        await next();
        // Hono catches a throwing handler and sets c.error, with c.res from onError.
        return { response: c.res, failed: c.error !== undefined || c.res.status >= 500 };
      },
    });
    if (!answered.ran) return answered.response;
  };
}
