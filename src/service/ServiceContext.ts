import type { Env } from "../env.js";
import type { LockStore } from "../store/types.js";
import type { NotingKind } from "../store/redis/changeNotes.js";
import { logError } from "../logError.js";
import type { RequestIds } from "./requestIds.js";

/**
 * What one request brings to the service layer, as the HTTP layer hands it
 * over (http/serviceRequestOf.ts reads it off the Hono context): the service
 * function it reaches makes its ServiceContext (requestContext.ts).
 */
export interface ServiceRequest {
  env: Env;
  ns: string;
  /** The store the Worker selected. */
  store: LockStore;
  /** The Worker's kinds, with the notes their writes send their lock objects. */
  kinds: readonly NotingKind[];
  /** The client's request id, when it sent one (its ids are derived from it), and the key it came with. */
  clientId: string | undefined;
  apiKey: string;
  /** The platform's waitUntil: the follow-ups after the answer run on it. */
  waitUntil(p: Promise<unknown>): void;
}

/** What a kind's service needs of the request it serves, made of its ServiceRequest (requestContext.ts). */
export interface ServiceContext {
  env: Env;
  ns: string;
  /**
   * The store as this request's writes see it (on Redis, a write that moves a line or a watched lock
   * tells its lock object after the answer: store/redis/changeNotes.ts), made at its first use: a
   * waiter that goes straight to the line touches no store in the Worker.
   */
  readonly store: LockStore;
  /** Which store that is ("redis" for a quorum too), known without making it. */
  readonly storeKind: LockStore["kind"];
  /** Owner tokens and request ids for this request's writes (derived from the client's request id when it sent one). */
  ids: RequestIds;
  /**
   * Runs a follow-up after the answer (telling the lock object of a write the
   * store already committed). Retried a few times; its failure never turns a
   * committed write into an error: the object's alarm catches up.
   */
  afterAnswer(what: string, step: () => Promise<unknown>): void;
}

const FOLLOW_UP_ATTEMPTS = 3;

/** A ServiceContext's `afterAnswer` on top of the platform's waitUntil. */
export function followUpsWith(waitUntil: (p: Promise<unknown>) => void): ServiceContext["afterAnswer"] {
  return (what, step) =>
    waitUntil(
      (async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            await step();
            return;
          } catch (err) {
            if (attempt >= FOLLOW_UP_ATTEMPTS) {
              logError(`follow-up ${what} failed ${attempt} times; the lock object's alarm will catch up`, err);
              return;
            }
            await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
          }
        }
      })(),
    );
}
