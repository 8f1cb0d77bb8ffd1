import { SOCKET_PROTOCOL, type KindSocketAnswer, type SocketAnswer } from "../../wire/socketProtocol.js";
import type { ObjectTimers } from "../timers.js";
import { EndedSockets } from "./endedSockets.js";
import { type Attachment, attachmentOf, closeWith, errorAsAnswer, keepAttachment } from "./socketAttachment.js";
import { refusal, type SocketCaps } from "./socketCaps.js";
import { limitIdle } from "./socketIdleLimits.js";
import { type SocketAt, socketAtOf } from "./socketSchemas.js";

/** What the sockets of one sort need of their lock object. */
export interface OpenSocketsHost {
  ctx: DurableObjectState;
  caps: SocketCaps;
  timers: ObjectTimers;
}

/** What differs between the sorts of socket (wait and watch sockets). */
export interface SocketSort {
  /** The runtime's tag on the sort's sockets (hibernatable sockets are found again by it); none for the untagged sort. */
  tag?: string;
  /** Whether the socket's first message is a watch (a watch socket's, or an awaited end's), for its idle limit's message. */
  firstIsWatch(at: SocketAt): boolean;
  /** A socket of the sort was counted out (its attachment already says done): what the sort keeps of it goes. */
  finished(ws: WebSocket, before: Attachment | null): void;
}

/**
 * The life of a lock object's sockets of one sort (WaitSockets.ts, WatchSockets.ts), written once:
 * accepted under the caps (hibernatable, with the sort's tag), limited while idle, ended with a last
 * message (fail, end), and counted out whoever ended them (finish): what still arrives on one is
 * dropped unread (endedSockets.ts) and its namespace object hears it is gone.
 */
export class OpenSockets {
  /** Sockets of the sort open here and not done, for the caps: kept as they come and go (counting attachments cost O(n) per join). */
  readonly live = new Set<WebSocket>();
  /** Sockets this instance ended: what still arrives on them is dropped unread (a flooder that writes on). */
  private readonly ended: EndedSockets;

  constructor(
    private readonly host: OpenSocketsHost,
    private readonly sort: SocketSort,
  ) {
    this.ended = new EndedSockets(host.ctx, host.caps, () => this.live);
  }

  /** The Worker's handover: the socket accepted, unless a cap refuses it (a plain HTTP answer, before any socket). */
  async accept(request: Request): Promise<{ ws: WebSocket; response: Response } | { response: Response }> {
    const at = socketAtOf(request);
    if (!at) return { response: Response.json({ error: "internal", message: "a socket without what it is for" }, { status: 500 }) };
    const admitted = await this.host.caps.admitSocket(at);
    if ("refused" in admitted) return { response: refusal(admitted.refused) };
    const [client, server] = Object.values(new WebSocketPair());
    try {
      this.host.ctx.acceptWebSocket(server, this.sort.tag ? [this.sort.tag] : undefined);
      this.live.add(server);
    } finally {
      admitted.room.settle();
    }
    const state: Attachment = { at, phase: "open", since: Date.now() };
    keepAttachment(server, state);
    this.limitIdle(server, state);
    const headers: Record<string, string> = at.protocol ? { "Sec-WebSocket-Protocol": SOCKET_PROTOCOL } : {};
    return { ws: server, response: new Response(null, { status: 101, webSocket: client, headers }) };
  }

  /** The object woke: the sort's sockets it still has that are not done (each counted live again, its idle limit set again). */
  restore(): WebSocket[] {
    const found = this.host.ctx.getWebSockets(this.sort.tag).filter((ws) => this.sort.tag || attachmentOf(ws)?.at.watch !== true);
    for (const ws of found) {
      const state = attachmentOf(ws);
      if (state && state.phase !== "done") this.live.add(ws);
      // Its idle limit was a timer of the instance that went: set again, for what is left of it.
      if (state) this.limitIdle(ws, state);
    }
    return found;
  }

  /** A socket's attachment while it is open and not ended here; undefined once it is (what arrives then is dropped unread). */
  current(ws: WebSocket): Attachment | undefined {
    if (this.ended.dropped(ws)) return undefined;
    const state = attachmentOf(ws);
    return state && state.phase !== "done" ? state : undefined;
  }

  /** Whether this instance ended the socket. */
  isEnded(ws: WebSocket): boolean {
    return this.ended.has(ws);
  }

  /** The socket's idle limit in its phase (socketIdleLimits.ts), ending it with its last message. */
  limitIdle(ws: WebSocket, state: Attachment): void {
    limitIdle(ws, state, this.host.timers, (socket, err) => this.fail(socket, err), this.sort.firstIsWatch(state.at));
  }

  /** A typed error as the socket's last message: the status and body HTTP would answer (errorAnswer). */
  fail(ws: WebSocket, err: unknown): void {
    this.end(ws, errorAsAnswer(err));
  }

  /** The socket's last message (the core's, or a kind's own), then a normal close. */
  end(ws: WebSocket, answer: SocketAnswer | KindSocketAnswer): void {
    this.finish(ws);
    closeWith(ws, answer);
  }

  /** Done, whoever ended it (the client, its connection, or this object): counted out, and its namespace object hears. */
  finish(ws: WebSocket): void {
    const state = attachmentOf(ws);
    keepAttachment(ws, state ? { at: state.at, phase: "done" } : null);
    this.ended.add(ws);
    this.live.delete(ws);
    this.sort.finished(ws, state);
    if (state && state.phase !== "done") this.host.caps.tell(state.at);
  }
}
