/**
 * The flood of the flood rows (flood.ts), in a process of its own so that
 * its send loops never delay the probe's timers and answers in the suite's
 * process. Started by fork() with one argument, FloodPlan as JSON.
 *
 * It is as harsh as a hostile client (issue 53): a raw TCP socket (node:net)
 * that does the WebSocket handshake itself, with no WebSocket library to
 * hold it back. Each of plan.sockets clients opens a wait socket and sends
 * its acquire; then, once held (plan.floodFrom "held": acked first) or at
 * once ("open"), writes masked {"type":"heartbeat"} frames in batches of
 * BATCH, the next batch as soon as the last was taken by the kernel (it waits
 * only on 'drain', never on a buffer threshold), never awaiting answers. A
 * close frame from the service is counted and ignored: the client writes on
 * until the connection itself is gone, then comes back plan.comeBackMs later
 * (on a fresh lock, or on one of plan.locks in turn). A refused handshake is
 * counted by its answer (status, error, limit) and comes back the same way.
 *
 * plan.mode "churn": the clients send no frame at all; each opens a wait
 * socket, and as soon as it is answered (101 or a refusal) ends it and opens
 * the next, as fast as it can (issue 53: handshake churn).
 *
 * On "stop" it sends back FloodStats and exits at once: its sockets are
 * destroyed, not closed, so what their kernel still holds is the service's
 * to read or drop (as when a flooding process exits), and the rows measure
 * how long that takes.
 */
import crypto from "node:crypto";
import net from "node:net";
import { keyAsProtocol, SOCKET_PROTOCOL } from "../src/wire/socketProtocol";

export interface FloodPlan {
  /** The Worker, http://host:port. */
  url: string;
  /** The flooding namespace's keys, used in turn by the clients (client i: keys[i % keys.length]). */
  keys: string[];
  /** Lock names start with this (one run's own). */
  prefix: string;
  /** Clients at once. */
  sockets: number;
  /** Pause before a client comes back once the service closed or refused it. */
  comeBackMs: number;
  /** "flood" (the default): heartbeats as fast as the connection drains; "churn": handshakes only, no frame. */
  mode?: "flood" | "churn";
  /** When the heartbeats start: once the lock is held (acquire, ack, held), or right after the acquire. */
  floodFrom?: "held" | "open";
  /** The clients' sessions take these many lock names in turn; absent: a fresh lock per session. */
  locks?: number;
}

/** What the flood did, and what the service answered it. */
export interface FloodStats {
  /** Sockets that opened (handshake answered 101), over every comeback. */
  opened: number;
  /** Handshakes that failed (refused before any socket, or no answer). */
  refused: number;
  /** Of the first plan.sockets handshakes (sent at once), those answered 101... */
  firstWaveOpened: number;
  /** ...within this long from the first's connect to the last's answer, ms (a rate refills meanwhile). */
  firstWaveMs: number;
  /** The sockets open at once at the most (101 answered and the connection not yet gone). */
  maxOpen: number;
  /** Times a socket was told `held`. */
  held: number;
  /** Heartbeats written (to the kernel). */
  sent: number;
  /** Heartbeats the service answered. */
  answered: number;
  /** Error messages and refused handshakes by "status error limit" (e.g. "429 rate_limited socket_messages"). */
  errors: Record<string, number>;
  /** Close frames the service sent (each ignored), by "code reason". */
  closes: Record<string, number>;
  /** From the start to the first close frame from the service, ms; absent: none. */
  firstCloseAfterMs?: number;
  /** From a close frame to its connection's end, ms, at most (absent: no connection the service closed ended). */
  closeToGoneMaxMs?: number;
  /** Sockets still open when told to stop. */
  openAtStop: number;
  /** Handshakes still unanswered when told to stop. */
  connectingAtStop: number;
}

/** To the parent, on "stop". */
export type FlooderMessage = { type: "report"; stats: FloodStats };

/** Frames per write: the hostile client's batch. */
const BATCH = 500;
const HEARTBEAT = Buffer.from(JSON.stringify({ type: "heartbeat" }));
/** BATCH masked heartbeat frames, built once and written again and again (as cheap a flood as a client can send). */
const HEARTBEATS = Buffer.concat(Array.from({ length: BATCH }, () => maskedFrame(HEARTBEAT)));

const bump = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/** A client-to-server text frame (masked, as RFC 6455 requires of a client). */
function maskedFrame(payload: Buffer, opcode = 0x1): Buffer {
  const mask = crypto.randomBytes(4);
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 0xff]);
  const body = Buffer.alloc(len);
  for (let i = 0; i < len; i++) body[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([head, mask, body]);
}

const textFrame = (value: unknown) => maskedFrame(Buffer.from(JSON.stringify(value)));

/** Reads server frames (unmasked) out of a connection's bytes; calls back per frame. */
function frameReader(onFrame: (opcode: number, payload: Buffer) => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  return (chunk) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    for (;;) {
      if (buffered.length < 2) return;
      const opcode = buffered[0] & 0x0f;
      let len = buffered[1] & 0x7f;
      let at = 2;
      if (len === 126) {
        if (buffered.length < 4) return;
        len = buffered.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (buffered.length < 10) return;
        len = Number(buffered.readBigUInt64BE(2));
        at = 10;
      }
      if (buffered[1] & 0x80) at += 4; // a server must not mask; skip the key if one does
      if (buffered.length < at + len) return;
      const payload = buffered.subarray(at, at + len);
      buffered = buffered.subarray(at + len);
      onFrame(opcode, payload);
    }
  };
}

function flood(plan: FloodPlan) {
  const stats: FloodStats = {
    opened: 0,
    refused: 0,
    firstWaveOpened: 0,
    firstWaveMs: 0,
    maxOpen: 0,
    held: 0,
    sent: 0,
    answered: 0,
    errors: {},
    closes: {},
    openAtStop: 0,
    connectingAtStop: 0,
  };
  const target = new URL(plan.url);
  const host = target.hostname;
  const port = Number(target.port || 80);
  const sockets = new Map<net.Socket, "connecting" | "open">();
  const comeBackTimers = new Set<ReturnType<typeof setTimeout>>();
  const startedAt = performance.now();
  let stopping = false;
  let sessions = 0;
  let open = 0;

  const comeBack = (client: number) => {
    if (stopping) return;
    const t = setTimeout(() => {
      comeBackTimers.delete(t);
      session(client);
    }, plan.comeBackMs);
    comeBackTimers.add(t);
  };

  /** One connection's life: handshake, acquire, flood (or, churning, end it at once); then back, comeBackMs after it is gone. */
  const session = (client: number) => {
    if (stopping) return;
    const n = sessions++;
    const name = `${plan.prefix}-${plan.locks ? n % plan.locks : `${client}-${n}`}`;
    const key = plan.keys[client % plan.keys.length];
    const socket = net.connect({ host, port });
    socket.setNoDelay(true);
    sockets.set(socket, "connecting");
    let upgraded = false;
    let head = Buffer.alloc(0);
    let closedAt: number | undefined;
    let pumping = false;

    const pump = () => {
      if (socket.destroyed || stopping) return;
      pumping = true;
      stats.sent += BATCH;
      if (socket.write(HEARTBEATS)) setImmediate(pump);
      else socket.once("drain", pump);
    };
    const startFlood = () => {
      if (!pumping) pump();
    };

    const onMessage = (text: string) => {
      let m: { type?: string; status?: number; error?: string; limit?: string; grant?: { token?: string } };
      try {
        m = JSON.parse(text);
      } catch {
        bump(stats.errors, "not JSON");
        return;
      }
      if (m.type === "granted") socket.write(textFrame({ type: "ack", token: m.grant?.token }));
      else if (m.type === "heartbeat") stats.answered++;
      else if (m.type === "error") bump(stats.errors, [m.status, m.error, m.limit].filter((x) => x !== undefined).join(" "));
      else if (m.type === "held") {
        stats.held++;
        startFlood();
      } else bump(stats.errors, `answered ${m.type}`);
    };
    const readFrames = frameReader((opcode, payload) => {
      if (opcode === 0x1) onMessage(payload.toString("utf8"));
      else if (opcode === 0x8) {
        // Counted, and ignored: no close frame back, the flood goes on until the connection is gone.
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        const reason = payload.subarray(2).toString("utf8");
        bump(stats.closes, `${code}${reason ? ` ${reason}` : ""}`);
        closedAt ??= performance.now();
        stats.firstCloseAfterMs ??= Math.round(performance.now() - startedAt);
      }
    });

    const onHandshake = (answer: Buffer, rest: Buffer) => {
      if (n < plan.sockets) stats.firstWaveMs = Math.max(stats.firstWaveMs, Math.round(performance.now() - startedAt));
      const text = answer.toString("latin1");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      if (status !== 101) {
        // A refusal: its JSON body names the limit (read what came with the head; enough for these small answers).
        let error = "";
        try {
          const body = JSON.parse(rest.toString("utf8")) as { error?: string; limit?: string };
          error = [body.error, body.limit].filter(Boolean).join(" ");
        } catch {
          error = "(body not read)";
        }
        stats.refused++;
        bump(stats.errors, `${status}${error ? ` ${error}` : ""}`);
        socket.destroy();
        return;
      }
      upgraded = true;
      sockets.set(socket, "open");
      stats.opened++;
      if (n < plan.sockets) stats.firstWaveOpened++;
      open++;
      stats.maxOpen = Math.max(stats.maxOpen, open);
      if (plan.mode === "churn") {
        socket.destroy();
        return;
      }
      socket.write(textFrame({ type: "acquire", ttlMs: 30_000, waitMs: 30_000, keep: true }));
      if (plan.floodFrom === "open") startFlood();
      if (rest.length) readFrames(rest);
    };

    socket.on("data", (chunk: Buffer) => {
      if (upgraded) {
        readFrames(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      onHandshake(head.subarray(0, end), head.subarray(end + 4));
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      sockets.delete(socket);
      if (upgraded) open--;
      else if (!stopping && head.length === 0) {
        stats.refused++;
        bump(stats.errors, "no answer");
      }
      if (closedAt !== undefined) stats.closeToGoneMaxMs = Math.max(stats.closeToGoneMaxMs ?? 0, Math.round(performance.now() - closedAt));
      comeBack(client);
    });
    socket.on("connect", () => {
      socket.write(
        [
          `GET /v1/locks/${encodeURIComponent(name)}/wait HTTP/1.1`,
          `Host: ${target.host}`,
          "Upgrade: websocket",
          "Connection: Upgrade",
          `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString("base64")}`,
          "Sec-WebSocket-Version: 13",
          `Sec-WebSocket-Protocol: ${SOCKET_PROTOCOL}, ${keyAsProtocol(key)}`,
          "",
          "",
        ].join("\r\n"),
      );
    });
  };

  for (let i = 0; i < plan.sockets; i++) session(i);

  return {
    stop(): FloodStats {
      stopping = true;
      for (const t of comeBackTimers) clearTimeout(t);
      for (const [s, state] of sockets) {
        if (state === "open") stats.openAtStop++;
        else stats.connectingAtStop++;
        s.destroy();
      }
      return stats;
    },
  };
}

const running = flood(JSON.parse(process.argv[2] ?? "null") as FloodPlan);
process.on("message", (m) => {
  if (m === "stop") process.send?.({ type: "report", stats: running.stop() } satisfies FlooderMessage, () => process.exit(0));
});
