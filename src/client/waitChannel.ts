import type { HoldfastClientOptions } from "./clientOptions.js";
import { UnreachableError } from "./errors.js";
import { runtimeWebSocket, SocketUnavailableError } from "./socketWait.js";

/**
 * The client's choice of channel for a wait (its `waitChannel` option): a
 * wait socket where one can be used, HTTP otherwise, and with "auto", HTTP
 * for good once the service (or the way to it) took no socket.
 */
export class SocketChannel {
  /** "auto" found that the service (or the way to it) takes no wait sockets: HTTP from then on. */
  private refused = false;

  constructor(private readonly options: HoldfastClientOptions) {}

  /**
   * One wait over a wait socket, by the waitChannel rule: undefined when it
   * should go over HTTP instead (no socket here, or with "auto" one that did
   * not open, which is remembered, or broke before the end, which left
   * nothing held). With "socket" a failure is the caller's error.
   */
  async wait<T>(
    waitMs: number,
    signal: AbortSignal | undefined,
    wait: (socket: { baseUrl: string; apiKey: string; WebSocket: typeof WebSocket }) => Promise<T>,
  ): Promise<T | undefined> {
    const WebSocketImpl = this.pick(waitMs);
    if (!WebSocketImpl) return undefined;
    try {
      return await wait({ baseUrl: this.options.baseUrl.replace(/\/+$/, ""), apiKey: this.options.apiKey, WebSocket: WebSocketImpl });
    } catch (err) {
      const forced = this.options.waitChannel === "socket";
      if (err instanceof SocketUnavailableError && !forced) this.refused = true;
      if (forced || !(err instanceof UnreachableError) || signal?.aborted) throw err;
      return undefined;
    }
  }

  /** The WebSocket to wait with, or undefined to wait over HTTP (see waitChannel). */
  private pick(waitMs: number): typeof WebSocket | undefined {
    const channel = this.options.waitChannel ?? "auto";
    if (waitMs <= 0 || channel === "http" || (channel === "auto" && this.refused)) return undefined;
    const impl = this.options.WebSocket ?? runtimeWebSocket();
    if (!impl && channel === "socket") throw new TypeError('waitChannel "socket" needs a WebSocket: this runtime has none (pass one as WebSocket)');
    return impl;
  }
}
