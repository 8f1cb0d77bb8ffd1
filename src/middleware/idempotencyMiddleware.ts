import type { Redis } from "@upstash/redis";
import type { Context, MiddlewareHandler } from "hono";
import { HoldfastError, LeaseLostError } from "../errors.js";
import { errorResponse } from "../http/errorResponse.js";
import { RESPONSE_MAX_BYTES } from "../limits.js";
import { Idempotency } from "../library/Idempotency.js";
import { keepLease, leaseClock } from "../wire/keepLease.js";
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

/** A handler's response as kept for replays. The body is text: JSON and form APIs, not downloads. */
interface StoredResponse {
  status: number;
  headers: Array<[string, string]>;
  body: string;
  /** The body was over the size limit and is not replayed (the work itself is still done once). */
  bodyOmitted?: true;
}

/**
 * Hono middleware that runs a handler once per idempotency key: a retried
 * request (a webhook redelivery, a client retry) gets the first response
 * again with `Idempotent-Replayed: true` instead of running the handler
 * twice; one that overlaps the first gets 409 in_progress, one that reuses
 * the key for a different request 422 fingerprint_mismatch. A handler that
 * throws or answers 5xx fails the key, so the sender's retry can run it.
 */
export function idempotency(options: IdempotencyMiddlewareOptions): MiddlewareHandler {
  const backend = options.store ?? options.redis;
  if (!backend) throw new TypeError("idempotency() needs a redis client or a store");
  const idem = new Idempotency(backend, { namespace: options.namespace });
  const keyOf = options.key ?? ((c: Context) => c.req.header("Idempotency-Key") || undefined);
  const fingerprintOf = options.fingerprint ?? defaultFingerprint;
  const keep = new Set(["content-type", "location", ...(options.keepHeaders ?? []).map((h) => h.toLowerCase())]);

  return async (c, next) => {
    const key = await keyOf(c);
    if (key === undefined) return next();

    let begun: Awaited<ReturnType<Idempotency["begin"]>>;
    const sentAt = leaseClock();
    try {
      const fingerprint = await fingerprintOf(c, await c.req.text());
      begun = await idem.begin(key, { ttlMs: options.ttlMs, retainMs: options.retainMs, fingerprint });
    } catch (err) {
      // in_progress, fingerprint_mismatch, a bad key, the store down: answered here, so
      // the handler never runs without the key's protection.
      if (err instanceof HoldfastError) return errorResponse(c, err);
      throw err;
    }
    if (begun.state === "completed") return replay(begun.response);

    const token = begun.token;
    const lease = keepLease({
      ttlMs: begun.ttlMs,
      since: sentAt,
      heartbeat: () =>
        idem.heartbeat(key, token).then(
          () => "ok" as const,
          (err) => (err instanceof LeaseLostError ? ("lost" as const) : Promise.reject(err)),
        ),
    });
    try {
      await next();
    } finally {
      lease.stop();
    }
    // Hono catches a throwing handler and sets c.error, with c.res from onError.
    if (c.error !== undefined || c.res.status >= 500) {
      await idem.fail(key, token).catch(() => undefined);
      return;
    }
    // A store error or a lapsed lease here cannot undo the work already done:
    // the response still goes out, and the key lapses at its deadline.
    await idem.complete(key, token, await toStored(c.res, keep)).catch(() => undefined);
  };
}

async function toStored(res: Response, keep: Set<string>): Promise<StoredResponse> {
  const headers: Array<[string, string]> = [];
  res.headers.forEach((value, name) => {
    if (keep.has(name.toLowerCase())) headers.push([name, value]);
  });
  const body = await res.clone().text();
  // Leave room for the status and headers in the stored JSON.
  if (new TextEncoder().encode(body).byteLength > RESPONSE_MAX_BYTES - 4096) {
    return { status: res.status, headers, body: "", bodyOmitted: true };
  }
  return { status: res.status, headers, body };
}

function replay(stored: unknown): Response {
  if (!isStoredResponse(stored)) {
    throw new Error("this idempotency key holds a result that was not stored by the idempotency middleware");
  }
  const headers = new Headers(stored.headers);
  headers.set("Idempotent-Replayed", "true");
  return new Response(stored.status === 204 || stored.status === 304 ? null : stored.body, { status: stored.status, headers });
}

function isStoredResponse(x: unknown): x is StoredResponse {
  const r = x as StoredResponse;
  return typeof r === "object" && r !== null && Number.isInteger(r.status) && Array.isArray(r.headers) && typeof r.body === "string";
}

async function defaultFingerprint(c: Context, bodyText: string): Promise<string> {
  const url = new URL(c.req.url);
  const data = new TextEncoder().encode(`${c.req.method} ${url.pathname}${url.search}\n${bodyText}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
