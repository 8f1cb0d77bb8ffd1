import { isRefusedConnection } from "../wire/refusedConnection.js";
import { errorFromResponse, HoldfastClientError, RateLimitedError, StoreUnavailableError, UnreachableError } from "./errors.js";

/** The header that makes a retried write apply once (docs/API.md). */
export const REQUEST_ID_HEADER = "Holdfast-Request-Id";

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
}

export interface SendOptions {
  /** Local time (ms) after which no attempt starts and the current one is cut off. */
  deadline: number;
  /** The caller's signal: aborts the attempt in flight and any retry. */
  signal?: AbortSignal;
}

/**
 * How long a write may be retried: under the 2 minutes the service remembers
 * a request id's answer, so a late retry still gets the first answer rather
 * than applying again or answering lease_lost for a write that landed.
 */
const WRITE_RETRY_MAX_MS = 100_000;

/** Retry delays: full jitter over 100 ms doubling to 2 s (AWS's "exponential backoff and jitter"). */
const BACKOFF_BASE_MS = 100;
const BACKOFF_CAP_MS = 2000;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/**
 * HTTP to the service with retries. Network errors, 429 and 503 are
 * retried with exponential backoff and full jitter until the deadline, but
 * not a refused connection (nothing listens: said at once, naming the URL); each
 * write carries one Holdfast-Request-Id on all its attempts, so the service
 * applies it once. Every other answer is returned or thrown as a typed
 * error at once. Runs wherever fetch, AbortController and crypto.randomUUID
 * do (Workers, Node 20+, Deno).
 */
export class Transport {
  private readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    // Bound to globalThis: Workers refuse a fetch called with another `this`.
    this.fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** A write: one request id for all its attempts (pass one to repeat an earlier write). */
  write<T>(path: string, body: unknown, options: SendOptions, requestId: string = crypto.randomUUID()): Promise<T> {
    const deadline = Math.min(options.deadline, Date.now() + WRITE_RETRY_MAX_MS);
    return this.send<T>("POST", path, body, { ...options, deadline }, requestId);
  }

  read<T>(path: string, options: SendOptions): Promise<T> {
    return this.send<T>("GET", path, undefined, options);
  }

  private async send<T>(method: string, path: string, body: unknown, options: SendOptions, requestId?: string): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (requestId) headers[REQUEST_ID_HEADER] = requestId;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      let retryable: HoldfastClientError;
      let waitAtLeast = 0;
      try {
        const { res, text } = await this.attempt(method, path, headers, payload, options);
        const parsed = parseJson(text);
        if (res.ok) return parsed as T;
        const err = errorFromResponse(res.status, isObject(parsed) ? parsed : { message: text.slice(0, 200) }, res.headers.get("retry-after"));
        if (!(err instanceof RateLimitedError || err instanceof StoreUnavailableError)) throw err;
        retryable = err;
        if (err instanceof RateLimitedError) waitAtLeast = err.retryAfterMs;
      } catch (err) {
        if (err instanceof HoldfastClientError) throw err;
        if (options.signal?.aborted) throw options.signal.reason;
        // In a browser page a refused origin looks like a dead network (no response at all): told apart at once.
        const refusedOrigin = attempt === 0 ? await this.refusedOrigin() : undefined;
        if (refusedOrigin) throw new UnreachableError(refusedOrigin, { cause: err });
        // Nothing listens there: the service is down or the URL is wrong, which no retry within the deadline mends.
        if (isRefusedConnection(err))
          throw new UnreachableError(`no answer from ${this.baseUrl}: connection refused (nothing listens there)`, { cause: err });
        retryable = new UnreachableError(`no answer from ${this.baseUrl}: ${describe(err)}`, { cause: err });
      }
      const delay = Math.max(waitAtLeast, Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt));
      if (Date.now() + delay >= options.deadline) throw retryable;
      await sleep(delay, options.signal);
    }
  }

  /**
   * On a page of another origin than the service's, a fetch that got no response at all may be the browser
   * refusing the service's answer (CORS), not a network that is down. A `no-cors` request, whose answer the
   * page may not read, still tells whether the service answers at all: if it does, the refusal was the
   * origin's, and the message says how to fix it. Undefined outside a browser page, or when the service
   * does not answer either (then the call is retried as for any network failure).
   */
  private async refusedOrigin(): Promise<string | undefined> {
    const page = (globalThis as { document?: unknown; location?: { origin?: string } }).location?.origin;
    if (!page || typeof (globalThis as { document?: unknown }).document === "undefined") return undefined;
    let service: string;
    try {
      service = new URL(this.baseUrl).origin;
    } catch {
      return undefined;
    }
    if (service === page) return undefined;
    try {
      await this.fetchFn(`${this.baseUrl}/healthz`, { mode: "no-cors", credentials: "omit", signal: AbortSignal.timeout(1500) });
    } catch {
      return undefined; // no answer to that either: the network, or the URL
    }
    return (
      `${service} answers, but not to this page: the browser refused its answer to ${page}. ` +
      `Most often the service's CORS_ORIGINS does not list ${page} for this key's namespace ` +
      '(docs/API.md, "Browsers: CORS and scoped tokens")'
    );
  }

  /** One HTTP attempt, cut off at the deadline or by the caller's signal. */
  private async attempt(method: string, path: string, headers: Record<string, string>, body: string | undefined, options: SendOptions) {
    const remaining = options.deadline - Date.now();
    if (remaining <= 0) throw new Error("the deadline passed");
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${remaining} ms`)), remaining);
    const onAbort = () => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await this.fetchFn(`${this.baseUrl}${path}`, { method, headers, body, signal: controller.signal });
      return { res, text: await res.text() }; // the body too within the deadline
    } finally {
      // Nothing of this attempt stays behind: no timer holding the process, no listener on a long-lived signal.
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}
