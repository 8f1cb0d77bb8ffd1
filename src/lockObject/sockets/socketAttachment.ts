import type { WaitRequest } from "../line/waitProtocol.js";
import type { KindSocketAnswer, SocketAnswer } from "../../wire/socketProtocol.js";
import type { SocketAt } from "./socketSchemas.js";
import { errorAnswer } from "../../wire/errorAnswer.js";

/**
 * Where a socket is in its one wait; kept as the socket's attachment, so it
 * survives the object's hibernation. A waiting socket keeps what it takes to
 * wait again when the object wakes (restore): its line token, its request,
 * its deadline and its place (seq), unless that is too large to attach.
 */
type SocketPhase =
  /** Opened at `since`; closed if no first message (an acquire, an awaited end, a watch) comes within SOCKET_IDLE_MS. */
  | { phase: "open"; since?: number }
  | { phase: "waiting"; resume?: Resume }
  /** Offered a grant at `offeredAt`; closed (the grant given back) if no ack comes within PICKUP_MS. */
  | { phase: "granted"; token: string; keep?: boolean; offeredAt?: number; ttlMs?: number }
  /** Held, the socket kept open (`keep`) for the holder's heartbeats and release, until the lease's end as the object last heard it. */
  | { phase: "holding"; token: string; leaseEndsAt?: number }
  /** A watch socket pushing the lock's state: the digest of the state it was last sent, and opened at a position, the last position it was sent (WatchSockets.ts). */
  | { phase: "watching"; seen?: string; position?: number }
  | { phase: "done" };
/** Where a socket's lock wait stands in the line: its token, arrival order, and whether the socket stays open once held. */
export type Place = { token: string; seq: number; keep?: boolean };
/** What a waiting socket takes to wait again: its place and request in the line, or that it awaits a state's end. */
export type Resume = (Place & { deadline: number; req: WaitRequest }) | { deadline: number; seq: number; awaitsEnd: true };
export type Attachment = { at: SocketAt } & SocketPhase;

/** A socket's attachment: what it is for and where it is in its wait (null: none). */
export function attachmentOf(ws: WebSocket): Attachment | null {
  return ws.deserializeAttachment() as Attachment | null;
}

export function keepAttachment(ws: WebSocket, state: Attachment | null): void {
  try {
    ws.serializeAttachment(state);
  } catch {
    // A closed socket keeps nothing.
  }
}

/** A waiting socket's attachment, with what it takes to resume; without it when that is too large to attach (2 KiB). */
export function keepWaiting(ws: WebSocket, at: SocketAt, resume: Resume): void {
  try {
    ws.serializeAttachment({ at, phase: "waiting", resume } satisfies Attachment);
  } catch {
    keepAttachment(ws, { at, phase: "waiting" });
  }
}

/** One message to the client; a client that is gone gets none (its close event withdraws what it had). */
export function sendAnswer(ws: WebSocket, answer: SocketAnswer | KindSocketAnswer): void {
  try {
    ws.send(JSON.stringify(answer));
  } catch {
    // The client is gone.
  }
}

/** The socket's last message, then a normal close (wait and watch sockets alike; the caller has counted it out). */
export function closeWith(ws: WebSocket, answer: SocketAnswer | KindSocketAnswer): void {
  sendAnswer(ws, answer);
  try {
    ws.close(1000, answer.type);
  } catch {
    // Already closing: the client went first.
  }
}

/** A typed error as a socket's last message: the status and body HTTP would answer (errorAnswer). */
export function errorAsAnswer(err: unknown): SocketAnswer {
  const { status, body } = errorAnswer(err);
  return { type: "error", status, ...body };
}

/**
 * The sockets that were waiting when the object went (hibernation, a restart that kept them), in
 * their old order; those that could not keep what it takes to wait again (too large to attach) apart.
 */
export function waitsToRestore(sockets: readonly WebSocket[]): {
  waiting: Array<{ ws: WebSocket; at: SocketAt; resume: Resume }>;
  lost: WebSocket[];
} {
  const waiting: Array<{ ws: WebSocket; at: SocketAt; resume: Resume }> = [];
  const lost: WebSocket[] = [];
  for (const ws of sockets) {
    const state = attachmentOf(ws);
    if (state?.phase !== "waiting") continue;
    if (state.resume) waiting.push({ ws, at: state.at, resume: state.resume });
    else lost.push(ws);
  }
  return { waiting: waiting.sort((a, b) => a.resume.seq - b.resume.seq), lost };
}
