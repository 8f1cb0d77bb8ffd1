import { InternalError, InvalidInputError, LeaseLostError } from "../../errors.js";
import type { KindName } from "../../store/kinds.js";
import { validated } from "../../wire/parse.js";
import type { SocketAnswer } from "../../wire/socketProtocol.js";
import type { SocketAt } from "./socketSchemas.js";
import type { KindObjectPart } from "../KindObjectPart.js";
import type { Line } from "../line/Line.js";
import { type Attachment, attachmentOf, keepAttachment, sendAnswer } from "./socketAttachment.js";
import { holderMessage } from "./socketSchemas.js";

/** What a socket's ack and a kept socket's holder messages need of the wait sockets (WaitSockets.ts). */
export interface SocketHolderHost {
  part(kind: KindName): KindObjectPart;
  line(kind: KindName): Line;
  afterWait(at: SocketAt, result: unknown): void;
  /** A kept socket is still there: its namespace object may hear of it (now and then). */
  told(at: SocketAt): void;
  /** The socket's last message, then a normal close. */
  end(ws: WebSocket, answer: SocketAnswer): void;
  limitIdle(ws: WebSocket, state: Attachment): void;
}

/** A socket's ack of the grant it was offered: held (closed, or kept for the holder), or too late. */
export function acknowledge(host: SocketHolderHost, ws: WebSocket, state: Attachment & { phase: "granted" }, token: string): void {
  if (token !== state.token) throw new InvalidInputError("invalid_token", "token: the ack names a token this socket was not granted");
  const line = host.line(state.at.kind);
  if (line.wasTakenBack(token)) throw new LeaseLostError("the grant was not acknowledged in time and went to the next waiter");
  line.pickedUp(token);
  if (!state.keep) {
    host.end(ws, { type: "held" });
    return;
  }
  // The lease's end by this object's clock: its ttl from the offer (the grant's expiresAt is the store's clock).
  const holding: Attachment = { at: state.at, phase: "holding", token, leaseEndsAt: (state.offeredAt ?? Date.now()) + (state.ttlMs ?? 0) };
  keepAttachment(ws, holding);
  sendAnswer(ws, { type: "held" });
  if (state.ttlMs !== undefined) host.limitIdle(ws, holding);
}

/**
 * A holder that kept its socket (`keep`): a heartbeat is answered and the
 * socket stays; a release is answered and the socket closes. The release
 * is done here, so the next waiter is handed the lock with no Worker in
 * between.
 */
export async function holdOnSocket(host: SocketHolderHost, ws: WebSocket, state: Attachment & { phase: "holding" }, json: unknown): Promise<void> {
  const message = validated(json, holderMessage, "holder message");
  const sentAt = Date.now();
  const part = host.part(state.at.kind);
  if (!part.heartbeatOnSocket || !part.releaseOnSocket) throw new InternalError(`the ${state.at.kind} has no socket holder`);
  const r =
    message.type === "heartbeat"
      ? await part.heartbeatOnSocket(state.at.ref, state.at.store, state.token, message.ttlMs)
      : await part.releaseOnSocket(state.at.ref, state.at.store, state.token);
  host.afterWait(state.at, r);
  if (r.status === "lost") throw new LeaseLostError();
  if (message.type === "release") {
    host.end(ws, { type: "released", ...r.answer });
    return;
  }
  const answer = r.answer as { ttlMs: number };
  const current = attachmentOf(ws);
  if (current?.phase === "holding" && current.token === state.token) {
    const holding: Attachment = { ...current, leaseEndsAt: sentAt + answer.ttlMs };
    keepAttachment(ws, holding);
    host.limitIdle(ws, holding);
  }
  sendAnswer(ws, { type: "heartbeat", ...r.answer } as SocketAnswer);
  host.told(state.at);
}
