import type { Env } from "../../env.js";
import { InvalidInputError } from "../../errors.js";
import type { LockStore } from "../../store/types.js";
import type { SocketAt } from "./socketSchemas.js";
import type { Line } from "../line/Line.js";
import { keepWaiting, type Place } from "./socketAttachment.js";
import type { WaitOutcome, WaitRequest } from "../line/waitProtocol.js";
import type { LineClient } from "../line/LineClient.js";

/** What a wait socket's acquire is run with: the socket's lock and store, and its line inside this object. */
interface SocketCall {
  env: Env;
  at: SocketAt;
  store: LockStore;
  line: LineClient;
  waitUntil(p: Promise<unknown>): void;
}

/** A new acquire message, or a wait the object resumes after it woke (its request as the line last had it). */
export type SocketAsk = { message: unknown } | { resume: WaitRequest };

/**
 * A wait socket's acquire through the kind's service and the acquire flow,
 * as an HTTP acquire goes (src/service/socketAcquire.ts, handed in by the
 * Worker's entry point): the object's core names no kind and no service.
 */
export type SocketAcquire = (
  call: SocketCall,
  ask: SocketAsk,
  signal: AbortSignal,
) => Promise<{ grant: { token: string; ttlMs: number }; delivery?: { takeBack(): Promise<unknown> } }>;

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

/**
 * A wait socket's line, for the acquire flow: this object's line (Line.ts),
 * called directly. Every grant waits for the client's ack (mustPickUp), and
 * the socket keeps what it takes to wait again in its attachment before it
 * joins the line, so the object may hibernate meanwhile.
 */
export function socketLine(line: Line, ws: WebSocket, at: SocketAt, place: Place, afterWait: (outcome: WaitOutcome<unknown>) => void): LineClient {
  return {
    inObject: true,
    wait: async <Grant>(req: WaitRequest, _grant: unknown, signal?: AbortSignal) => {
      if ("token" in req && req.token !== undefined) {
        throw new InvalidInputError("invalid_token", "token: a re-entry is answered at once: send it over HTTP, not a wait socket");
      }
      if (req.waitMs < 1) throw new InvalidInputError("invalid_wait", "waitMs: a wait socket waits: give at least 1 (a try-lock goes over HTTP)");
      keepWaiting(ws, at, { ...place, deadline: Date.now() + req.waitMs, req });
      // A renew moves the end of the wait in the line and in the attachment (what a woken object resumes).
      const renewable = (renew: (waitMs: number) => void) =>
        renewals.set(ws, (waitMs) => {
          renew(waitMs);
          keepWaiting(ws, at, { ...place, deadline: Date.now() + waitMs, req });
        });
      const options = { mustPickUp: true, token: place.token, renewable };
      const outcome = await line.wait(req, signal ?? new AbortController().signal, options).finally(() => renewals.delete(ws));
      afterWait(outcome);
      return outcome as WaitOutcome<Grant>;
    },
    pickedUp: async (token) => line.pickedUp(token),
    takeBack: async (token) => line.takeBack(token),
  };
}
