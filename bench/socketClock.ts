/**
 * When a socket client's messages come and go, for table 2: the waiter's
 * `granted` and `held`, and the holder's `release` frame. From them, beside
 * the handoff itself, the time the client spends on its own (release() called
 * -> its frame sent, plus `held` in -> the acquire resolved): what the SDK adds
 * over the raw socket client, measured without the server's noise in it.
 */
import type { WorkerApi } from "./clients";

export interface SocketClock {
  /** When the last `granted` arrived (NaN: none yet). */
  grantedAt(): number;
  /** When the last `held` arrived. */
  heldAt(): number;
  /** When the last `release` frame was handed to the socket. */
  releaseSentAt(): number;
}

const GRANTED = '{"type":"granted"';
const HELD = '{"type":"held"';
const RELEASE = '{"type":"release"}';

/** The marks, and the two hooks a socket feeds them from. */
function marks() {
  let granted = Number.NaN;
  let held = Number.NaN;
  let releaseSent = Number.NaN;
  return {
    clock: { grantedAt: () => granted, heldAt: () => held, releaseSentAt: () => releaseSent } satisfies SocketClock,
    // Taken before the client's own handler runs (the listener is added first), so before it parses or answers.
    received(e: MessageEvent) {
      if (typeof e.data !== "string") return;
      if (e.data.startsWith(GRANTED)) granted = performance.now();
      else if (e.data.startsWith(HELD)) held = performance.now();
    },
    sent(data: unknown) {
      if (data === RELEASE) releaseSent = performance.now();
    },
  };
}

/** The same raw socket client (clients.ts), its sockets clocked. */
export function clockedApi(api: WorkerApi): { api: WorkerApi; clock: SocketClock } {
  const m = marks();
  const clocked = Object.create(api) as WorkerApi; // everything else is api's own
  clocked.openSocket = (path) => {
    const ws = api.openSocket(path);
    ws.addEventListener("message", m.received);
    const send = ws.send.bind(ws);
    ws.send = (data) => {
      m.sent(data);
      send(data);
    };
    return ws;
  };
  return { api: clocked, clock: m.clock };
}

/** The runtime's WebSocket, clocked, for a client that takes a WebSocket class (the SDK). */
export function clockedWebSocket(): { WebSocket: typeof WebSocket; clock: SocketClock } {
  const m = marks();
  class Clocked extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      // Added in the constructor: before the client sets onmessage, so it runs first.
      this.addEventListener("message", m.received);
    }
    override send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
      m.sent(data);
      super.send(data);
    }
  }
  return { WebSocket: Clocked, clock: m.clock };
}
