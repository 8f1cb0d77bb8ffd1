import { LeaseLostError, SocketIdleError } from "../../errors.js";
import { PICKUP_MS, SOCKET_IDLE_MS } from "../../limits.js";
import { type Attachment, attachmentOf } from "./socketAttachment.js";
import type { ObjectTimers } from "../timers.js";

/**
 * The idle limits: a socket that says nothing within SOCKET_IDLE_MS of
 * opening, one offered a grant it does not acknowledge within PICKUP_MS,
 * and a kept socket whose lease ended with no heartbeat here are closed
 * with their last message. Each timer checks, when it fires, that the
 * socket is still where it was set.
 */
export function limitIdle(
  ws: WebSocket,
  state: Attachment,
  timers: ObjectTimers,
  fail: (ws: WebSocket, err: unknown) => void,
  /** The socket's first message is a watch (an awaited run's, or a watch socket's), not an acquire. */
  firstIsWatch = false,
): void {
  const now = Date.now();
  if (state.phase === "open") {
    const since = state.since ?? now;
    timers.after(Math.max(0, since + SOCKET_IDLE_MS - now), () => {
      const s = attachmentOf(ws);
      if (s?.phase !== "open") return;
      const what = firstIsWatch || s.at.watch ? "watch" : "acquire";
      fail(ws, new SocketIdleError(`no ${what} came within ${SOCKET_IDLE_MS} ms of opening the socket`));
    });
  } else if (state.phase === "granted") {
    const offeredAt = state.offeredAt ?? now;
    timers.after(Math.max(0, offeredAt + PICKUP_MS - now), () => {
      const s = attachmentOf(ws);
      if (s?.phase !== "granted" || s.token !== state.token) return;
      fail(ws, new LeaseLostError(`the grant was not acknowledged within ${PICKUP_MS} ms and went to the next waiter`));
    });
  } else if (state.phase === "holding" && state.leaseEndsAt !== undefined) {
    const { token, leaseEndsAt } = state;
    timers.after(Math.max(0, leaseEndsAt - now), () => {
      const s = attachmentOf(ws);
      if (s?.phase !== "holding" || s.token !== token || (s.leaseEndsAt ?? 0) > leaseEndsAt) return;
      fail(
        ws,
        new SocketIdleError(
          "the lease reached its end with no heartbeat on this socket: it has lapsed, unless kept alive over HTTP; the socket closes",
        ),
      );
    });
  }
}
