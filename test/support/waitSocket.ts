// A wait socket as a client sees it (Node's WebSocket, which is a browser's), and the raw
// handshake over TCP for what a WebSocket client cannot do (a reset, a handshake's status).
import net from "node:net";
import { keyAsProtocol, SOCKET_PROTOCOL } from "../../src/wire/socketProtocol";

export interface TestSocket {
  ws: WebSocket;
  opened: Promise<void>;
  /** The next message from the service (waits for it). */
  next(timeoutMs?: number): Promise<any>;
  /** Resolves with the close code once the socket is closed. */
  closed: Promise<number>;
}

/** Opens a wait socket with the key as a subprotocol, as a browser does. */
export function openSocket(base: string, path: string, key: string): TestSocket {
  const ws = new WebSocket(base.replace(/^http/, "ws") + path, [SOCKET_PROTOCOL, keyAsProtocol(key)]);
  const messages: any[] = [];
  const wake: Array<() => void> = [];
  ws.onmessage = (e) => {
    messages.push(JSON.parse(String(e.data)));
    for (const w of wake.splice(0)) w();
  };
  const opened = new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`the socket ${path} failed`));
  });
  const closed = new Promise<number>((resolve) => ws.addEventListener("close", (e) => resolve(e.code)));
  const next = async (timeoutMs = 15_000) => {
    const end = Date.now() + timeoutMs;
    while (!messages.length) {
      if (Date.now() > end) throw new Error(`no message on ${path} within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        wake.push(r);
        setTimeout(r, 50);
      });
    }
    return messages.shift();
  };
  return { ws, opened, next, closed };
}

/** Opens a socket and sends its acquire: the waiter is in line once the service has it. */
export async function socketWaiter(base: string, path: string, key: string, acquire: Record<string, unknown>): Promise<TestSocket> {
  const s = openSocket(base, path, key);
  await s.opened;
  s.ws.send(JSON.stringify({ type: "acquire", ...acquire }));
  return s;
}

/**
 * Acknowledges the grant that arrives and answers the grant once `held` came; `timeoutMs` bounds each of
 * the two (an object still reading a flood's frames answers the ack as late as it sent the grant).
 */
export async function takeGrant(s: TestSocket, timeoutMs?: number): Promise<any> {
  const granted = await s.next(timeoutMs);
  if (granted.type !== "granted") throw new Error(`expected a grant, got ${JSON.stringify(granted)}`);
  s.ws.send(JSON.stringify({ type: "ack", token: granted.grant.token }));
  const held = await s.next(timeoutMs);
  if (held.type !== "held") throw new Error(`expected held, got ${JSON.stringify(held)}`);
  return granted.grant;
}

/**
 * A WebSocket handshake over a raw TCP connection. Answers the status line and,
 * once upgraded, a way to send one text frame and to reset the connection (RST,
 * as a crashed client's kernel does).
 */
export function rawHandshake(base: string, path: string, headers: Record<string, string>) {
  const { port } = new URL(base);
  const socket = net.connect(Number(port), "127.0.0.1");
  const head = handshakeHead(path, headers);
  const status = new Promise<{ status: number; text: string }>((resolve, reject) => {
    let got = "";
    socket.on("data", (d) => {
      got += d.toString("latin1");
      const end = got.indexOf("\r\n\r\n");
      if (end >= 0) resolve({ status: Number(got.split(" ")[1]), text: got });
    });
    socket.on("error", reject);
  });
  socket.write(head);
  return {
    status,
    /** One masked text frame (a client's frames are masked). */
    sendText(text: string) {
      const payload = Buffer.from(text);
      if (payload.length > 125) throw new Error("short frames only");
      const mask = Buffer.from([1, 2, 3, 4]);
      const masked = Buffer.from(payload.map((b: number, i: number) => b ^ mask[i % 4]));
      socket.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]));
    },
    reset() {
      socket.resetAndDestroy();
    },
    end() {
      socket.destroy();
    },
  };
}

/** A WebSocket handshake's request head. */
function handshakeHead(path: string, headers: Record<string, string>): string {
  return [
    `GET ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Version: 13",
    `Sec-WebSocket-Key: ${Buffer.from("holdfast-test-key").toString("base64")}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    "",
    "",
  ].join("\r\n");
}

/** A WebSocket handshake over raw TCP, read to its end: a refused one is a plain HTTP answer with a JSON body (null once upgraded). */
export function handshakeAnswer(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: string; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(base).port), "127.0.0.1");
    let got = "";
    socket.on("data", (d) => {
      got += d.toString("utf8");
      const end = got.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = got.slice(0, end);
      const status = Number(head.split(" ")[1]);
      const body = got.slice(end + 4);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? Number.NaN);
      if (status !== 101 && !(Buffer.byteLength(body) >= length)) return;
      socket.destroy();
      resolve({ status, headers: head, body: status === 101 ? null : JSON.parse(body) });
    });
    socket.on("error", reject);
    socket.write(handshakeHead(path, headers));
  });
}

/**
 * A hostile client over raw TCP (issue 53): opens a wait socket, acquires with keep, acknowledges, and once held
 * writes heartbeats as fast as the connection drains, ignoring the service's close frame (counted, never answered)
 * until the connection itself is gone. `floodFrom: "open"`: it floods right after its acquire instead; "asked": when
 * its flood() is called.
 */
export function floodingClient(base: string, path: string, key: string, floodFrom: "held" | "open" | "asked" = "held") {
  const socket = net.connect(Number(new URL(base).port), "127.0.0.1");
  const messages: any[] = [];
  const closeCodes: number[] = [];
  const frame = (text: string) => {
    const payload = Buffer.from(text);
    const mask = Buffer.from([9, 8, 7, 6]);
    return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, Buffer.from(payload.map((b: number, i: number) => b ^ mask[i % 4]))]);
  };
  const batch = Buffer.concat(Array.from({ length: 500 }, () => frame(JSON.stringify({ type: "heartbeat" }))));
  let flooding = false;
  let paused = false;
  /** Times the connection drained after the close frame came: the service went on reading (at least 500 frames each). */
  let drainsAfterClose = 0;
  const flood = () => {
    if (flooding) return;
    flooding = true;
    const pump = () => {
      if (socket.destroyed || paused) return;
      if (socket.write(batch)) setImmediate(pump);
      else
        socket.once("drain", () => {
          if (closeCodes.length) drainsAfterClose++;
          pump();
        });
    };
    pump();
  };
  let upgraded = false;
  let buffered = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    if (!upgraded) {
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      upgraded = true;
      buffered = buffered.subarray(end + 4);
      socket.write(frame(JSON.stringify({ type: "acquire", ttlMs: 30_000, waitMs: 30_000, keep: true })));
      if (floodFrom === "open") flood();
    }
    // Server frames are unmasked, and shorter than 64 KiB here.
    for (;;) {
      if (buffered.length < 2) break;
      const extended = (buffered[1] & 0x7f) === 126;
      if (extended && buffered.length < 4) break;
      const at = extended ? 4 : 2;
      const length = extended ? buffered.readUInt16BE(2) : buffered[1] & 0x7f;
      if (buffered.length < at + length) break;
      const opcode = buffered[0] & 0x0f;
      const payload = buffered.subarray(at, at + length);
      buffered = buffered.subarray(at + length);
      if (opcode === 0x8) closeCodes.push(payload.readUInt16BE(0));
      if (opcode !== 0x1) continue;
      const m = JSON.parse(payload.toString("utf8"));
      messages.push(m);
      if (m.type === "granted") socket.write(frame(JSON.stringify({ type: "ack", token: m.grant.token })));
      if (m.type === "held" && floodFrom === "held") flood();
    }
  });
  socket.on("error", () => {});
  const gone = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.write(handshakeHead(path, { "Sec-WebSocket-Protocol": `${SOCKET_PROTOCOL}, ${keyAsProtocol(key)}` }));
  return {
    messages,
    closeCodes,
    /** Resolves once the connection is gone (the service tore it down: this client never closes it). */
    gone,
    drainsAfterClose: () => drainsAfterClose,
    flood,
    /** Stops writing, the connection left open (never closed from this side): what it wrote is still the service's to read. */
    pause: () => {
      paused = true;
    },
    stop: () => socket.destroy(),
  };
}
