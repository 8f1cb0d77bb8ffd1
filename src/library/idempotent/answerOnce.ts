import { HoldfastError, LeaseLostError } from "../../errors.js";
import { RESPONSE_MAX_BYTES } from "../../limits.js";
import { keepLease, leaseClock } from "../../wire/keepLease.js";
import type { CompletedCache } from "./completedCache.js";

/**
 * Where the rules keep keys: the four steps of one key they use, so one set of rules serves every
 * backend. The library's Idempotency (Redis, a store) is one; a holdfast service's client is another
 * (`HoldfastClient#idempotencyKeys()`, holdfast/client). begin throws the typed errors of
 * src/errors.ts (InProgressError, FingerprintMismatchError, InvalidInputError, StoreUnavailableError...),
 * which the rules answer; heartbeat, complete and fail throw LeaseLostError once the token no longer
 * holds the key.
 */
export interface IdempotencyBackend {
  begin(
    key: string,
    options: { ttlMs: number; retainMs?: number; fingerprint: string },
  ): Promise<{ state: "started"; token: string; ttlMs: number } | { state: "completed"; response: unknown }>;
  heartbeat(key: string, token: string): Promise<unknown>;
  complete(key: string, token: string, response: unknown): Promise<unknown>;
  fail(key: string, token: string): Promise<unknown>;
}

/** What the rules keep of a request's key: how long the handler may run, how long its answer is kept, which headers. */
export interface AnswerRules {
  /** The handler must answer within this; it is heartbeated every ttlMs/3 while it runs (unless `heartbeat` is false). */
  ttlMs: number;
  /** false: ttlMs is the handler's time left to its runtime's deadline, and the key is held until then, not renewed past it. */
  heartbeat?: boolean;
  /** How long the response is kept for replays (default one day). */
  retainMs?: number;
  /** Response headers to keep and replay, lower case (content-type and location always). */
  keep: ReadonlySet<string>;
  /** Completed responses kept in this process: a replay answered without a round trip (off unless given). */
  cache?: CompletedCache;
}

/** How long a response is kept for replays when the caller does not say (the store's default too). */
const RETAIN_DEFAULT_MS = 86_400_000;

/** One request with a key, as the rules see it; `run` runs the handler (its response, and whether it failed). */
export interface KeyedCall {
  key: string;
  fingerprint: string;
  run(): Promise<{ response: Response; failed: boolean }>;
  /** A typed error (in_progress, fingerprint_mismatch, a bad key, the store down) as this caller's answer. */
  answerError(err: HoldfastError): Response;
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
 * The rules of an idempotent request, once for every adapter (the fetch-handler
 * wrapper, idempotent.ts; the Hono middleware): the key is begun; a completed
 * key's response is replayed with `Idempotent-Replayed: true`; one in progress
 * is 409 in_progress with Retry-After, one reused for another request 422
 * fingerprint_mismatch; otherwise the handler runs, heartbeated, and its
 * response is kept, unless it threw or answered 5xx: then the key is failed,
 * so the sender's retry runs it again.
 *
 * Answers `{ ran: false, response }` when the handler did not run (a replay,
 * an error), `{ ran: true, response }` when it did.
 */
export async function answerOnce(idem: IdempotencyBackend, rules: AnswerRules, call: KeyedCall): Promise<{ ran: boolean; response: Response }> {
  const cached = rules.cache?.get(call.key, call.fingerprint);
  if (cached !== undefined) return { ran: false, response: replay(cached) };
  let begun: Awaited<ReturnType<IdempotencyBackend["begin"]>>;
  const sentAt = leaseClock();
  try {
    begun = await idem.begin(call.key, { ttlMs: rules.ttlMs, retainMs: rules.retainMs, fingerprint: call.fingerprint });
  } catch (err) {
    // Answered here, so the handler never runs without the key's protection.
    if (err instanceof HoldfastError) return { ran: false, response: call.answerError(err) };
    throw err;
  }
  if (begun.state === "completed") {
    rules.cache?.put(call.key, call.fingerprint, begun.response, rules.retainMs ?? RETAIN_DEFAULT_MS);
    return { ran: false, response: replay(begun.response) };
  }

  const { key } = call;
  const token = begun.token;
  const lease =
    rules.heartbeat === false
      ? undefined
      : keepLease({
          ttlMs: begun.ttlMs,
          since: sentAt,
          heartbeat: () =>
            idem.heartbeat(key, token).then(
              () => "ok" as const,
              (err) => (err instanceof LeaseLostError ? ("lost" as const) : Promise.reject(err)),
            ),
        });
  let outcome: { response: Response; failed: boolean };
  try {
    outcome = await call.run();
  } catch (err) {
    await idem.fail(key, token).catch(() => undefined);
    throw err;
  } finally {
    lease?.stop();
  }
  if (outcome.failed) {
    await idem.fail(key, token).catch(() => undefined);
    return { ran: true, response: outcome.response };
  }
  // A store error or a lapsed lease here cannot undo the work already done:
  // the response still goes out, and the key lapses at its deadline.
  const stored = await toStored(outcome.response, rules.keep);
  const completed = await idem.complete(key, token, stored).then(
    () => true,
    () => false,
  );
  if (completed) rules.cache?.put(key, call.fingerprint, stored, rules.retainMs ?? RETAIN_DEFAULT_MS);
  return { ran: true, response: outcome.response };
}

async function toStored(res: Response, keep: ReadonlySet<string>): Promise<StoredResponse> {
  const headers: Array<[string, string]> = [];
  res.headers.forEach((value, name) => {
    if (keep.has(name.toLowerCase())) headers.push([name, value]);
  });
  const whole: StoredResponse = { status: res.status, headers, body: await res.clone().text() };
  // Measured as it is stored, JSON text: a body's quotes, backslashes and newlines take two bytes
  // there (control characters six), so a body under the limit may be over it once escaped, and a
  // complete refused as too large leaves the key to lapse and the work to run again. The room
  // left is for the complete's own fields (its token) in a holdfast service's 64 KiB request body.
  if (new TextEncoder().encode(JSON.stringify(whole)).byteLength > RESPONSE_MAX_BYTES - STORED_ROOM_BYTES) {
    return { status: res.status, headers, body: "", bodyOmitted: true };
  }
  return whole;
}

/** What a stored response leaves of RESPONSE_MAX_BYTES for the rest of a complete's request. */
const STORED_ROOM_BYTES = 1024;

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

/** The headers always kept, and the caller's. */
export function keptHeaders(extra: readonly string[] = []): ReadonlySet<string> {
  return new Set(["content-type", "location", ...extra.map((h) => h.toLowerCase())]);
}

/** SHA-256 hex of a request's method, path (with query) and body: the default fingerprint. */
export async function requestFingerprint(method: string, url: string, bodyText: string): Promise<string> {
  const u = new URL(url);
  return sha256Hex(`${method} ${u.pathname}${u.search}\n${bodyText}`);
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
