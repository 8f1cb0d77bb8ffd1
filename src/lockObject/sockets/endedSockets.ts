import { logError } from "../../logError.js";
import { floodPenalties } from "../../admission/floodPenalties.js";
import { attachmentOf } from "./socketAttachment.js";
import type { SocketAt } from "./socketSchemas.js";
import type { SocketCaps } from "./socketCaps.js";

/**
 * A client that writes on past the close of a socket this object ended
 * ignores the close (rather than having had messages on the way when it
 * came) once it sent more than CROSSED_MAX messages and still writes
 * GRACE_MS after the close (time for a client that floods by mistake to read
 * why it was closed: a connection torn down while its client writes is
 * reset, and the reset takes with it what the client had not read yet)...
 */
const CROSSED_MAX = 16;
const GRACE_MS = 1000;
/**
 * ...or, whatever the time, once this object has dropped this many messages on its ended sockets: more than a
 * client's burst in flight, a flood (counted over the object, so a flood of many sockets at once is cut as soon).
 */
const FLOODED_PAST_CLOSE = 2000;
/** Past CROSSED_MAX, whether the object may reset is looked at every this many messages (it walks the live sockets). */
const LOOK_EVERY = 64;
/** How long the namespace object may take to hear the last penalty and count before the reset goes ahead without it. */
const TELL_WAIT_MS = 250;

/**
 * The sockets a lock object ended (wait and watch sockets alike): what
 * still arrives on one is dropped before anything is read. And a client
 * that writes on regardless (issue 53).
 *
 * A close is a request: the runtime keeps the connection, and reads and
 * hands over every frame still coming on it, until the client answers the
 * close or goes away. A client that ignores it (a hostile flooder: raw
 * writes as fast as the connection drains) is read for as long as it keeps
 * writing, and after it exits, for all it left in the kernel's buffers:
 * each frame one event here (dropped unread), and on one process every
 * other object's events wait behind them.
 *
 * Nothing in the WebSocket API tears a hibernatable socket's connection
 * down; resetting the object (ctx.abort) does: the runtime drops its
 * sockets with it, and their connections with them. So once such a client
 * ignores the close (CROSSED_MAX, GRACE_MS, FLOODED_PAST_CLOSE), and no one
 * else waits on this object (no HTTP waiter, no
 * handshake being admitted, and no socket or watch socket but those that
 * have not said what they are for yet, of keys or addresses refused new
 * sockets for a flood: admission/floodPenalties.ts), the object tells its namespace
 * object its sockets are gone (waiting at most TELL_WAIT_MS) and resets
 * itself; its state is in storage (Durable store) or Redis, and the next
 * request starts it again. Where someone else waits, the frames are still
 * dropped unread.
 */
export class EndedSockets {
  /** The sockets this instance ended: when, and how many messages came on each since. */
  private readonly after = new WeakMap<WebSocket, { at: number; messages: number }>();
  /** Messages dropped on them all. */
  private droppedHere = 0;
  private resetting = false;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly caps: SocketCaps,
    /** This kind's live sockets (wait or watch): those of flooders may go with the reset. */
    private readonly live: () => Iterable<WebSocket>,
  ) {}

  /** This instance ended the socket: what still arrives on it is dropped before anything is read (a flood's tail). */
  add(ws: WebSocket): void {
    if (!this.after.has(ws)) this.after.set(ws, { at: Date.now(), messages: 0 });
  }

  has(ws: WebSocket): boolean {
    return this.after.has(ws);
  }

  /** A message on `ws`: true when this instance ended it (the message is to be dropped unread, and is counted). */
  dropped(ws: WebSocket): boolean {
    const ended = this.after.get(ws);
    if (ended === undefined) return false;
    const n = ++ended.messages;
    const ignored = n > CROSSED_MAX && (++this.droppedHere >= FLOODED_PAST_CLOSE || Date.now() - ended.at >= GRACE_MS);
    if (n % LOOK_EVERY === 0 && ignored && !this.resetting && this.nobodyElse()) this.reset(attachmentOf(ws)?.at);
    return true;
  }

  private reset(at: SocketAt | undefined): void {
    this.resetting = true;
    const told = this.caps
      .settleTells(at)
      .catch((err) => logError("the namespace object did not hear a reset lock object's sockets were gone; its count lapses by itself", err));
    Promise.race([told, new Promise((resolve) => setTimeout(resolve, TELL_WAIT_MS))]).finally(() => {
      // Looked at again: a waiter may have come meanwhile.
      if (!this.nobodyElse()) {
        this.resetting = false;
        return;
      }
      this.ctx.abort("a client wrote on after its wait socket was closed: its connection is torn down with the object");
    });
  }

  /**
   * No one waits here but flooders: sockets of keys or addresses refused new sockets for a flood that have not
   * said what they are for yet (a flood's other sockets, opened with it, whose frames are still on their way).
   */
  private nobodyElse(): boolean {
    let flooders = 0;
    for (const ws of this.live()) {
      const state = attachmentOf(ws);
      if (state?.phase !== "open" || !state.at.clientIds || floodPenalties.refusedFor(state.at.clientIds) === 0) return false;
      flooders++;
    }
    return this.caps.quiet(flooders);
  }
}
