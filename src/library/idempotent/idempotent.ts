import type { Redis } from "@upstash/redis";
import { HoldfastError, InvalidInputError } from "../../errors.js";
import { TTL_MAX_MS, TTL_MIN_MS } from "../../limits.js";
import type { LockStore } from "../../store/types.js";
import { errorAnswer, retryAfterHeader } from "../../wire/errorAnswer.js";
import { type AnswerRules, answerOnce, type IdempotencyBackend, keptHeaders, requestFingerprint, sha256Hex } from "./answerOnce.js";
import { CompletedCache, type CompletedCacheOptions } from "./completedCache.js";
import { Idempotency } from "../Idempotency.js";

/** Where a request's idempotency key comes from: a header, or a field of its JSON body. */
export type KeySource = { header: string } | { jsonField: string };

/**
 * Where each sender puts its delivery's id, as its docs say (docs/idempotency.md cites each):
 * a redelivery of the same event carries the same id.
 */
export const senders = {
  /** The IETF Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header): the default. */
  idempotencyKey: { header: "Idempotency-Key" },
  /** Stripe: the event object's `id` ("evt_..."), in the body (docs.stripe.com/webhooks, "Handle duplicate events"). */
  stripe: { jsonField: "id" },
  /** GitHub: `X-GitHub-Delivery`, a GUID per event, kept on a redelivery (docs.github.com, webhook delivery headers). */
  github: { header: "X-GitHub-Delivery" },
  /** Shopify: `X-Shopify-Webhook-Id`, the same on every retry of a delivery (shopify.dev, "Verify webhook deliveries"). */
  shopify: { header: "X-Shopify-Webhook-Id" },
  /** Slack Events API: the envelope's `event_id`, in the body; its retries add X-Slack-Retry-Num (api.slack.com/apis/events-api). */
  slack: { jsonField: "event_id" },
  /** Standard Webhooks and Svix: `webhook-id`, the same on every attempt of a message (standardwebhooks.com). */
  standardWebhooks: { header: "webhook-id" },
} as const satisfies Record<string, KeySource>;

export interface IdempotentOptions<Rest extends unknown[] = unknown[]> {
  /** Where keys live: an @upstash/redis client or a store, or `client` (one of them). */
  redis?: Redis;
  store?: LockStore;
  /**
   * A holdfast service's client (`new HoldfastClient({ baseUrl, apiKey })` from holdfast/client), for an app
   * with no Redis of its own: keys live in the service, in its API key's namespace (so no `namespace` here).
   */
  client?: { idempotencyKeys(): IdempotencyBackend };
  namespace?: string;
  /**
   * How long the handler may run, in ms (100 .. 86 400 000). A number: the key is heartbeated every ttlMs/3
   * while the handler runs. A function of the handler's arguments: the time the handler has left to its
   * runtime's deadline, e.g. `(request, env) => env.lambdaContext.getRemainingTimeInMillis()` (AWS Lambda):
   * the key is held until then and not renewed past it, so a run cut off at its deadline frees the key for
   * the retry (a fraction is rounded down). Any other value is a TypeError, before the key is touched.
   */
  ttlMs: number | ((request: Request, ...rest: Rest) => number);
  /** How long the response is kept for replays (default one day). */
  retainMs?: number;
  /** The request's key: a sender's (`senders.github`...), a source of your own, or a function. Default: the Idempotency-Key header. */
  key?: KeySource | ((request: Request, bodyText: string) => string | undefined | Promise<string | undefined>);
  /** No key: 400 naming where it was expected (default: the handler just runs unprotected). */
  required?: boolean;
  /**
   * What identifies the request for a key: by default its method, path and body (any other body is 422).
   * Field names pick fields of a JSON body instead (only those must match; others may differ); a function
   * computes it.
   */
  fingerprint?: readonly string[] | ((request: Request, bodyText: string) => string | Promise<string>);
  /** Response headers to replay besides content-type and location. */
  keepHeaders?: string[];
  /**
   * Keep completed responses in this process too, so a replay here needs no round trip (off by default;
   * bounded: 1000 entries and 1 MiB unless set). Another process's view of the key is not seen meanwhile.
   */
  cache?: boolean | CompletedCacheOptions;
}

/**
 * Makes any fetch handler (`(request, ...rest) => Response`) run once per
 * idempotency key: a Worker's `fetch`, a Next.js route handler, `Deno.serve`,
 * `Bun.serve`. The rules are the Hono middleware's (src/library/idempotent/answerOnce.ts):
 * a retried request gets the first response again with `Idempotent-Replayed:
 * true`; one that overlaps the first gets 409 in_progress with Retry-After;
 * the same key with another request 422 fingerprint_mismatch; a handler that
 * throws or answers 5xx fails the key, so the sender's retry runs it.
 */
export function idempotent<Rest extends unknown[]>(
  handler: (request: Request, ...rest: Rest) => Response | Promise<Response>,
  options: IdempotentOptions<Rest>,
): (request: Request, ...rest: Rest) => Promise<Response> {
  const idem = backendOf(options);
  const cache = options.cache ? new CompletedCache(options.cache === true ? {} : options.cache) : undefined;
  const base = { retainMs: options.retainMs, keep: keptHeaders(options.keepHeaders), cache };
  const { ttlMs } = options;
  // A number is checked once and heartbeated; a function is asked each call for the time left to the
  // handler's deadline, which the key is held to and not renewed past.
  let rulesFor: (request: Request, rest: Rest) => AnswerRules;
  if (typeof ttlMs === "function") {
    rulesFor = (request, rest) => ({ ...base, ttlMs: checkedTtl(roundDown(ttlMs(request, ...rest)), "ttlMs(request, ...) gave"), heartbeat: false });
  } else {
    const fixed = { ...base, ttlMs: checkedTtl(ttlMs, "ttlMs is") };
    rulesFor = () => fixed;
  }
  const source = options.key ?? senders.idempotencyKey;

  return async (request, ...rest) => {
    const bodyText = request.method === "GET" || request.method === "HEAD" ? "" : await request.clone().text();
    let key: string | undefined;
    let fingerprint: string;
    let callRules: AnswerRules;
    try {
      key = await keyOf(source, request, bodyText);
      if (key === undefined) {
        if (!options.required) return handler(request, ...rest);
        throw new InvalidInputError("missing_idempotency_key", `this endpoint needs an idempotency key: ${describeSource(source)}`);
      }
      fingerprint = await fingerprintOf(options.fingerprint, request, bodyText);
      callRules = rulesFor(request, rest);
    } catch (err) {
      if (err instanceof HoldfastError) return errorAsResponse(err);
      throw err;
    }
    const answered = await answerOnce(idem, callRules, {
      key,
      fingerprint,
      answerError: errorAsResponse,
      run: async () => {
        const response = await handler(request, ...rest);
        return { response, failed: response.status >= 500 };
      },
    });
    return answered.response;
  };
}

/** Where keys live: the service's (client), or the library's over Redis or a store. */
function backendOf(options: Pick<IdempotentOptions, "redis" | "store" | "client" | "namespace">): IdempotencyBackend {
  const local = options.store ?? options.redis;
  if (options.client && local) throw new TypeError("idempotent(): one of redis, store or client, not both");
  if (options.client) {
    if (options.namespace !== undefined) {
      throw new TypeError("idempotent(): namespace is for redis or a store; a holdfast service keeps keys in its API key's namespace");
    }
    return options.client.idempotencyKeys();
  }
  if (!local) throw new TypeError("idempotent() needs a redis client, a store or a holdfast client");
  return new Idempotency(local, { namespace: options.namespace });
}

/** A ttl as the store takes it (src/limits.ts), or a TypeError naming the option: nothing has been changed yet. */
function checkedTtl(value: unknown, what: string): number {
  if (typeof value === "number" && Number.isInteger(value) && value >= TTL_MIN_MS && value <= TTL_MAX_MS) return value;
  throw new TypeError(`idempotent(): ${what} ${String(value)}; it must be a whole number of ms in ${TTL_MIN_MS}..${TTL_MAX_MS}`);
}

/** A time left may come with a fraction (a deadline less performance.now()); whole ms are kept. */
const roundDown = (value: number): number => (typeof value === "number" ? Math.floor(value) : value);

async function keyOf(source: NonNullable<IdempotentOptions["key"]>, request: Request, bodyText: string): Promise<string | undefined> {
  if (typeof source === "function") return (await source(request, bodyText)) || undefined;
  if ("header" in source) return request.headers.get(source.header) || undefined;
  const value = fieldOf(bodyText, source.jsonField);
  return typeof value === "string" && value ? value : undefined;
}

function describeSource(source: NonNullable<IdempotentOptions["key"]>): string {
  if (typeof source === "function") return "none was found in the request";
  return "header" in source ? `send the ${source.header} header` : `the JSON body's "${source.jsonField}" field is missing`;
}

async function fingerprintOf(fingerprint: IdempotentOptions["fingerprint"], request: Request, bodyText: string): Promise<string> {
  if (typeof fingerprint === "function") return fingerprint(request, bodyText);
  if (!fingerprint) return requestFingerprint(request.method, request.url, bodyText);
  // Chosen fields of a JSON body, in the order given: another value in any of them is another request.
  const values = fingerprint.map((field) => fieldOf(bodyText, field) ?? null);
  return sha256Hex(JSON.stringify(values));
}

/** A top-level field of a JSON body (undefined when the body is not a JSON object). */
function fieldOf(bodyText: string, field: string): unknown {
  try {
    const parsed: unknown = JSON.parse(bodyText);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>)[field] : undefined;
  } catch {
    return undefined;
  }
}

/** A typed error as a JSON answer (the service's one mapping, src/wire/errorAnswer.ts), with Retry-After where it says when. */
function errorAsResponse(err: HoldfastError): Response {
  const answer = errorAnswer(err);
  const headers: Record<string, string> = { "content-type": "application/json" };
  const retryAfter = retryAfterHeader(answer);
  if (retryAfter !== undefined) headers["retry-after"] = retryAfter;
  return new Response(JSON.stringify(answer.body), { status: answer.status, headers });
}
