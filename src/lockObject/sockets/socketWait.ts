import type { Env } from "../../env.js";
import { InvalidInputError } from "../../errors.js";
import { countAcquire } from "../../metrics.js";
import { grantOrThrow } from "../line/grantOrThrow.js";
import type { Line } from "../line/Line.js";
import type { WaitOutcome, WaitRequest } from "../line/waitProtocol.js";
import { keepWaiting, type Place } from "./socketAttachment.js";
import type { SocketAt } from "./socketSchemas.js";

/** The renewals of the sockets waiting in a line on this isolate, by socket (a wait's end is dropped with it). */
const renewals = new WeakMap<WebSocket, (waitMs: number) => void>();

/**
 * A `renew` on a wait socket: its wait in the line now ends waitMs from now,
 * in the same place (docs/API.md). A socket with no wait in the line (its
 * acquire still on the way, or granted meanwhile) has nothing to renew.
 */
export function renewWait(ws: WebSocket, waitMs: number): void {
  renewals.get(ws)?.(waitMs);
}

/** What a socket's wait in the line is run with. */
export interface SocketWait {
  env: Env;
  ws: WebSocket;
  at: SocketAt;
  place: Place;
  /** Put back in line on waking: the store may have it registered from before. */
  registered?: boolean;
  line: Line;
  /** After the line's outcome (which may have written here): the object's bookkeeping. */
  afterWait(outcome: WaitOutcome<unknown>): void;
}

/**
 * A wait socket's acquire, run in the lock object itself: the kind's request
 * (its acquire message, checked as its HTTP body is: ObjectKind.acquireBody)
 * waits in the line as an HTTP waiter's does, counted as every acquire is
 * (countAcquire). Every grant waits for the client's ack (mustPickUp), the
 * first try's too, so the store is not tried first; the socket keeps what it
 * takes to wait again in its attachment before it joins the line, so the
 * object may hibernate meanwhile. The grant, or the error its refusal stands
 * for (a timeout is LockedError).
 */
export function waitOnSocket(
  wait: SocketWait,
  req: WaitRequest,
  signal: AbortSignal,
): Promise<{ grant: { token: string; ttlMs: number }; pickup: boolean }> {
  const { ws, at, place, line } = wait;
  if (req.token !== undefined) {
    throw new InvalidInputError("invalid_token", "token: a re-entry is answered at once: send it over HTTP, not a wait socket");
  }
  if (req.waitMs < 1) throw new InvalidInputError("invalid_wait", "waitMs: a wait socket waits: give at least 1 (a try-lock goes over HTTP)");
  return countAcquire(
    wait.env,
    at.ref.ns,
    at.kind,
    async () => {
      keepWaiting(ws, at, { ...place, deadline: Date.now() + req.waitMs, req });
      // A renew moves the end of the wait in the line and in the attachment (what a woken object resumes).
      const renewable = (renew: (waitMs: number) => void) =>
        renewals.set(ws, (waitMs) => {
          renew(waitMs);
          keepWaiting(ws, at, { ...place, deadline: Date.now() + waitMs, req });
        });
      const outcome = await line
        .wait(req, signal, { mustPickUp: true, token: place.token, registered: wait.registered, renewable })
        .finally(() => renewals.delete(ws));
      wait.afterWait(outcome);
      const grant = grantOrThrow(outcome) as { token: string; ttlMs: number };
      return { grant, pickup: outcome.status === "granted" && outcome.pickup };
    },
    signal,
  );
}
