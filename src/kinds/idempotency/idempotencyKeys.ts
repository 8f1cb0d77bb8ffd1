import { IDEMPOTENCY } from "./types.js";
import { FingerprintMismatchError, InProgressError, InvalidInputError, LeaseLostError, TooLargeError } from "../../errors.js";
import { JSON_MAX_DEPTH, jsonDepth } from "../../jsonDepth.js";
import { FINGERPRINT_MAX_CHARS, RESPONSE_MAX_BYTES, RETAIN_DEFAULT_MS, RETAIN_MAX_MS, RETAIN_MIN_MS } from "../../limits.js";
import type { LockRef } from "../../store/types.js";
import { kindOps, type LockStore } from "../../store/types.js";
import { newOwnerToken, newRequestId } from "../../tokens.js";
import { checkHolder, checkInt, checkName, checkToken, checkTtl } from "../../validation.js";
import type { IdempotencyBeginResult, IdempotencyState } from "./types.js";
import type { AnsweredWrite } from "../../store/types.js";

export interface BeginOptions {
  /** Finish or heartbeat within this, or another begin takes over. */
  ttlMs: number;
  /** How long the fingerprint, then the response, is kept (default one day). */
  retainMs?: number;
  /** Identifies the request; the key reused with a different one is refused. */
  fingerprint?: string;
  /** Who works on it, in words (1-256 printable characters): shown by inspect and to callers told in_progress. */
  holder?: string;
}

/**
 * The owner token and request id a write uses, when the caller chooses them
 * (the HTTP service derives them from the client's request id, so the
 * client's retries apply once). By default, fresh random ones.
 */
export interface WriteIds extends Partial<AnsweredWrite> {
  token?: string;
}

/** The caller's request id as it chose it; without one a fresh id, which no retry can carry (idUnrepeated). */
const answeredWriteOf = ({ requestId, idUnrepeated }: WriteIds): AnsweredWrite =>
  requestId === undefined ? { requestId: newRequestId(), idUnrepeated: true } : { requestId, ...(idUnrepeated ? { idUnrepeated } : {}) };

export type BeginResult =
  | { state: "started"; token: string; fence: number; ttlMs: number; expiresAt: number }
  | { state: "completed"; response: unknown; completedAt: number; fence: number };

/** A begin's answer, from the store or from the key's lock object (a begin with onExpire): a run in progress and another fingerprint are thrown. */
export function beginAnswer(r: IdempotencyBeginResult): BeginResult {
  switch (r.status) {
    case "started":
      return { state: "started", token: r.token, fence: r.fence, ttlMs: r.ttlMs, expiresAt: r.expiresAt };
    case "completed":
      return { state: "completed", response: r.response, completedAt: r.completedAt, fence: r.fence };
    case "in_progress":
      throw new InProgressError(r.retryAfterMs, undefined, { holder: r.holder, expiresAt: r.expiresAt });
    default:
      throw new FingerprintMismatchError();
  }
}

/**
 * Idempotency keys on a store, in one namespace: begin a key to own its
 * work, complete it with the result everyone else then gets, or fail it so
 * it can run again. The library's Idempotency (src/library/Idempotency.ts)
 * and the HTTP service (./service.ts) both run these. Outcomes other than
 * "started" and "completed" are thrown as typed errors.
 */
export class IdempotencyKeys {
  constructor(
    private readonly store: LockStore,
    private readonly ns: string,
  ) {}

  /** Throws InProgressError while another owner is within its ttl, FingerprintMismatchError on a different fingerprint. */
  async begin(key: string, options: BeginOptions, ids: WriteIds = {}): Promise<BeginResult> {
    checkTtl(options.ttlMs);
    const retainMs = options.retainMs ?? RETAIN_DEFAULT_MS;
    checkInt("invalid_retain", "retainMs", retainMs, RETAIN_MIN_MS, RETAIN_MAX_MS);
    const fp = options.fingerprint;
    if (fp !== undefined && (typeof fp !== "string" || fp.length < 1 || fp.length > FINGERPRINT_MAX_CHARS)) {
      throw new InvalidInputError("invalid_fingerprint", `fingerprint is a string of 1..${FINGERPRINT_MAX_CHARS} characters`);
    }
    const r = await kindOps(this.store, IDEMPOTENCY).begin(this.ref(key), {
      token: ids.token ?? newOwnerToken(),
      ttlMs: options.ttlMs,
      retainMs,
      fingerprint: fp,
      ...answeredWriteOf(ids),
      holder: options.holder === undefined ? undefined : checkHolder(options.holder),
    });
    return beginAnswer(r);
  }

  /** Moves the owner's deadline to ttlMs (default: the begin's) from the store's now. */
  async heartbeat(key: string, token: string, ttlMs?: number) {
    if (ttlMs !== undefined) checkTtl(ttlMs);
    const r = await kindOps(this.store, IDEMPOTENCY).heartbeat(this.ref(key), { token: checkToken(token), ttlMs });
    if (r.status === "lost") throw new LeaseLostError();
    return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
  }

  /**
   * Stores the result (any JSON value; undefined is stored as null) for
   * retainMs. Only the current owner within its deadline may: anyone else
   * gets LeaseLostError and nothing changes.
   */
  async complete(key: string, token: string, response: unknown, ids: WriteIds = {}) {
    const responseJson = toJsonText(response);
    if (new TextEncoder().encode(responseJson).byteLength > RESPONSE_MAX_BYTES) {
      throw new TooLargeError(`the response's JSON is over ${RESPONSE_MAX_BYTES} bytes`);
    }
    const r = await kindOps(this.store, IDEMPOTENCY).complete(this.ref(key), {
      token: checkToken(token),
      responseJson,
      ...answeredWriteOf(ids),
    });
    if (r.status === "lost") throw new LeaseLostError();
    // waited: someone was told in_progress meanwhile (Redis store); the Worker then tells the lock object.
    return { completedAt: r.completedAt, fence: r.fence, waited: r.waited === true };
  }

  /** Gives the key up so it can be begun again; answers the fence of the start it ended. */
  async fail(key: string, token: string, ids: WriteIds = {}): Promise<{ fence: number }> {
    const r = await kindOps(this.store, IDEMPOTENCY).fail(this.ref(key), { token: checkToken(token), ...answeredWriteOf(ids) });
    if (r.status === "lost") throw new LeaseLostError();
    return { fence: r.fence };
  }

  inspect(key: string): Promise<IdempotencyState> {
    return kindOps(this.store, IDEMPOTENCY).inspect(this.ref(key));
  }

  private ref(key: string): LockRef {
    // Keys become part of storage keys (a Redis hash tag), so they follow the name rule.
    return { ns: this.ns, name: checkName(key, "idempotency keys") };
  }
}

function toJsonText(response: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(response);
  } catch (err) {
    throw new InvalidInputError("invalid_response", `the response is not JSON-serializable: ${(err as Error).message}`);
  }
  if (text !== undefined && jsonDepth(text) > JSON_MAX_DEPTH) {
    throw new InvalidInputError("invalid_response", `the response nests arrays and objects deeper than ${JSON_MAX_DEPTH} levels`);
  }
  return text ?? "null";
}
