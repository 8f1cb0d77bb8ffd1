/**
 * The flood of the flood rows (flood.ts), in a process of its own so that
 * its send loops never delay the probe's timers and answers in the suite's
 * process. Started by fork() with one argument, FloodPlan as JSON.
 *
 * It runs plan.sockets flooders at once, all with the flooding namespace's
 * key. Each opens a wait socket on a lock of its own, acquires with keep,
 * acknowledges, and once held sends {"type":"heartbeat"} as fast as its
 * connection drains (the next batch waits until undici's send buffer is
 * below 64 KiB), never awaiting answers. Whenever the service closes or
 * refuses it, it comes back plan.comeBackMs later on a fresh lock (the old
 * lease stands until its TTL) and floods again: a client that will not take
 * no for an answer. On "stop" it closes its sockets and sends back a
 * FloodStats.
 */
import { keyAsProtocol, SOCKET_PROTOCOL } from "../src/wire/socketProtocol";

export interface FloodPlan {
  /** The Worker, http://host:port. */
  url: string;
  /** The flooding namespace's key. */
  key: string;
  /** Lock names start with this (one run's own). */
  prefix: string;
  /** Flooders at once. */
  sockets: number;
  /** Pause before a flooder comes back once the service closed or refused it. */
  comeBackMs: number;
}

/** What the flood did, and what the service answered it. */
export interface FloodStats {
  /** Sockets that opened (handshake answered 101), over every comeback. */
  opened: number;
  /** Handshakes that failed (refused before any socket, or no answer). */
  refused: number;
  /** Times a socket was told `held`. */
  held: number;
  /** Heartbeats sent. */
  sent: number;
  /** Heartbeats the service answered. */
  answered: number;
  /** Error messages by "status error limit" (e.g. "429 rate_limited socket_messages"). */
  errors: Record<string, number>;
  /** Closes the service made (not the flooder at its stop), by "code reason". */
  closes: Record<string, number>;
  /** From the start to the first close by the service, ms; absent: none. */
  firstCloseAfterMs?: number;
  /** Sockets still open when told to stop. */
  openAtStop: number;
  /** Handshakes still unanswered when told to stop. */
  connectingAtStop: number;
}

/** To the parent, on "stop". */
export type FlooderMessage = { type: "report"; stats: FloodStats };

const HEARTBEAT = JSON.stringify({ type: "heartbeat" });
/** undici buffers what it could not write yet; above this the loop yields until the connection drains. */
const HIGH_WATER_BYTES = 64 * 1024;
/** Sends per socket per turn of the event loop, so that the other sockets and the answers get their turn. */
const BATCH = 500;

const bump = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

function flood(plan: FloodPlan) {
  const stats: FloodStats = { opened: 0, refused: 0, held: 0, sent: 0, answered: 0, errors: {}, closes: {}, openAtStop: 0, connectingAtStop: 0 };
  const sockets = new Set<WebSocket>();
  const comeBackTimers = new Set<ReturnType<typeof setTimeout>>();
  const startedAt = performance.now();
  let stopping = false;
  let sessions = 0;

  /** One socket's life: open, acquire, ack, flood once held; then back, comeBackMs after it is closed or refused. */
  const session = (flooder: number) => {
    if (stopping) return;
    const ws = new WebSocket(`${plan.url.replace(/^http/, "ws")}/v1/locks/${encodeURIComponent(`${plan.prefix}-${flooder}-${sessions++}`)}/wait`, [
      SOCKET_PROTOCOL,
      keyAsProtocol(plan.key),
    ]);
    sockets.add(ws);
    let opened = false;
    const pump = () => {
      if (ws.readyState !== WebSocket.OPEN) return;
      for (let n = 0; n < BATCH && ws.bufferedAmount < HIGH_WATER_BYTES; n++) {
        ws.send(HEARTBEAT);
        stats.sent++;
      }
      setImmediate(pump);
    };
    ws.onopen = () => {
      opened = true;
      stats.opened++;
      ws.send(JSON.stringify({ type: "acquire", ttlMs: 30_000, waitMs: 30_000, keep: true }));
    };
    ws.onmessage = (e) => {
      let m: { type?: string; status?: number; error?: string; limit?: string; grant?: { token?: string } };
      try {
        m = JSON.parse(String(e.data));
      } catch {
        bump(stats.errors, "not JSON");
        return;
      }
      if (m.type === "granted") ws.send(JSON.stringify({ type: "ack", token: m.grant?.token }));
      else if (m.type === "heartbeat") stats.answered++;
      else if (m.type === "error") bump(stats.errors, [m.status, m.error, m.limit].filter((x) => x !== undefined).join(" "));
      else if (m.type === "held") {
        stats.held++;
        pump();
      } else bump(stats.errors, `answered ${m.type}`);
    };
    ws.onerror = () => {};
    ws.onclose = (e) => {
      sockets.delete(ws);
      if (stopping) return;
      if (!opened) stats.refused++;
      else {
        bump(stats.closes, `${e.code}${e.reason ? ` ${e.reason}` : ""}`);
        stats.firstCloseAfterMs ??= Math.round(performance.now() - startedAt);
      }
      const t = setTimeout(() => {
        comeBackTimers.delete(t);
        session(flooder);
      }, plan.comeBackMs);
      comeBackTimers.add(t);
    };
  };

  for (let i = 0; i < plan.sockets; i++) session(i);

  return {
    stop(): FloodStats {
      stopping = true;
      for (const t of comeBackTimers) clearTimeout(t);
      for (const s of sockets) {
        if (s.readyState === WebSocket.OPEN) stats.openAtStop++;
        if (s.readyState === WebSocket.CONNECTING) stats.connectingAtStop++;
        s.close(1000, "flood over");
      }
      return stats;
    },
  };
}

const running = flood(JSON.parse(process.argv[2] ?? "null") as FloodPlan);
process.on("message", (m) => {
  if (m === "stop") process.send?.({ type: "report", stats: running.stop() } satisfies FlooderMessage, () => process.exit(0));
});
