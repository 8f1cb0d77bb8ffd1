/**
 * The flood of the flood rows (flood.ts), in a process of its own so that
 * its send loops never delay the probe's timers and answers in the suite's
 * process. Started by fork() with one argument, FloodPlan as JSON.
 *
 * Its sockets, all in the flooding namespace, each on a lock of its own:
 * the kept socket (the flood of issue 34) and plan.many more. Each acquires
 * with keep and acknowledges. Once every one is held (or ended), it tells
 * the parent "ready" and they stand idle: the parent times the other
 * namespace with them standing. On "go kept" the kept socket, on "go many"
 * the many, send {"type":"heartbeat"} as fast as their connections drain
 * (the next batch waits until undici's send buffer is below 64 KiB), never
 * awaiting answers. The kept socket comes back when the service closes or refuses
 * it, after a pause, on a fresh lock (the old lease stands until its TTL),
 * and floods again, so its flood lasts the whole window; the many do not
 * (a handshake flood is the request budget's, which bare workerd does not
 * bind). On "stop" it closes its sockets and sends back a FloodReport.
 */
import { keyAsProtocol, SOCKET_PROTOCOL } from "../src/wire/socketProtocol";

export interface FloodPlan {
  /** The Worker, http://host:port. */
  url: string;
  /** The flooding namespace's key. */
  key: string;
  /** Lock names start with this (one run's own). */
  prefix: string;
  /** Sockets besides the kept one. */
  many: number;
  /** Pause before the kept socket comes back once the service closed or refused it. */
  comeBackMs: number;
}

/** What one of the two floods did, and what the service answered it. */
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
  /** Error messages by "status error" (e.g. "429 rate_limited"). */
  errors: Record<string, number>;
  /** Closes the service made (not the flooder at its stop), by "code reason". */
  closes: Record<string, number>;
  /** From its "go" to the first close by the service, ms; absent: none. */
  firstCloseAfterMs?: number;
  /** Sockets still open when told to stop. */
  openAtStop: number;
  /** Handshakes still unanswered when told to stop. */
  connectingAtStop: number;
}

export type FloodReport = { kept: FloodStats; many: FloodStats };

/** To the parent: every socket held or ended (`held`: how many are held), and at the end what happened. */
export type FlooderMessage = { type: "ready"; held: number } | { type: "report"; report: FloodReport };

const HEARTBEAT = JSON.stringify({ type: "heartbeat" });
/** undici buffers what it could not write yet; above this the loop yields until the connection drains. */
const HIGH_WATER_BYTES = 64 * 1024;
/** Sends per socket per turn of the event loop, so that the other sockets and the answers get their turn. */
const BATCH = 500;
/** "ready" is told after this even if some sockets are neither held nor ended. */
const READY_WITHIN_MS = 30_000;

const emptyStats = (): FloodStats => ({
  opened: 0,
  refused: 0,
  held: 0,
  sent: 0,
  answered: 0,
  errors: {},
  closes: {},
  openAtStop: 0,
  connectingAtStop: 0,
});
const bump = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

function flood(plan: FloodPlan) {
  const report: FloodReport = { kept: emptyStats(), many: emptyStats() };
  const sockets = new Map<WebSocket, "kept" | "many">();
  /** The held sockets' floods, waiting for "go". */
  const idle = { kept: [] as (() => void)[], many: [] as (() => void)[] };
  const goAt: Partial<Record<"kept" | "many", number>> = {};
  let stopping = false;
  let keptSessions = 0;
  /** The first sockets not yet held nor ended; at 0, "ready". */
  let settling = 1 + plan.many;
  let holding = 0;
  const settled = () => {
    if (--settling === 0) tell({ type: "ready", held: holding });
  };
  const comeBackTimers = new Set<ReturnType<typeof setTimeout>>();

  /**
   * One socket's life: open, acquire, ack, flood once held and told "go"; `ended` once it is closed or refused.
   * `first`: one of the sockets "ready" waits for (not a comeback).
   */
  const session = (which: "kept" | "many", lock: string, first: boolean, ended: () => void) => {
    const stats = report[which];
    const ws = new WebSocket(`${plan.url.replace(/^http/, "ws")}/v1/locks/${encodeURIComponent(lock)}/wait`, [
      SOCKET_PROTOCOL,
      keyAsProtocol(plan.key),
    ]);
    sockets.set(ws, which);
    let opened = false;
    let held = false;
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
      let m: { type?: string; status?: number; error?: string; grant?: { token?: string } };
      try {
        m = JSON.parse(String(e.data));
      } catch {
        bump(stats.errors, "not JSON");
        return;
      }
      if (m.type === "granted") ws.send(JSON.stringify({ type: "ack", token: m.grant?.token }));
      else if (m.type === "heartbeat") stats.answered++;
      else if (m.type === "error") bump(stats.errors, `${m.status} ${m.error}`);
      else if (m.type === "held") {
        stats.held++;
        held = true;
        if (goAt[which] !== undefined) pump();
        else {
          idle[which].push(pump);
          if (first) {
            holding++;
            settled();
          }
        }
      } else bump(stats.errors, `answered ${m.type}`);
    };
    ws.onerror = () => {};
    ws.onclose = (e) => {
      sockets.delete(ws);
      if (stopping) return;
      if (!opened) stats.refused++;
      else {
        bump(stats.closes, `${e.code}${e.reason ? ` ${e.reason}` : ""}`);
        const from = goAt[which];
        if (from !== undefined) stats.firstCloseAfterMs ??= Math.round(performance.now() - from);
      }
      if (first && goAt[which] === undefined && !held) settled();
      ended();
    };
  };

  const kept = () => {
    if (stopping) return;
    const n = keptSessions++;
    session("kept", `${plan.prefix}-kept-${n}`, n === 0, () => {
      const t = setTimeout(() => {
        comeBackTimers.delete(t);
        kept();
      }, plan.comeBackMs);
      comeBackTimers.add(t);
    });
  };
  kept();
  for (let i = 0; i < plan.many; i++) session("many", `${plan.prefix}-many-${i}`, true, () => {});
  const notReady = setTimeout(() => {
    if (settling > 0) tell({ type: "ready", held: holding });
    settling = Number.NaN; // told once
  }, READY_WITHIN_MS);

  return {
    go(which: "kept" | "many") {
      clearTimeout(notReady);
      goAt[which] = performance.now();
      for (const pump of idle[which].splice(0)) pump();
    },
    stop(): FloodReport {
      stopping = true;
      for (const t of comeBackTimers) clearTimeout(t);
      for (const [s, which] of sockets) {
        if (s.readyState === WebSocket.OPEN) report[which].openAtStop++;
        if (s.readyState === WebSocket.CONNECTING) report[which].connectingAtStop++;
        s.close(1000, "flood over");
      }
      return report;
    },
  };
}

function tell(m: FlooderMessage) {
  process.send?.(m);
}

const running = flood(JSON.parse(process.argv[2] ?? "null") as FloodPlan);
process.on("message", (m) => {
  if (m === "go kept") running.go("kept");
  if (m === "go many") running.go("many");
  if (m === "stop") process.send?.({ type: "report", report: running.stop() } satisfies FlooderMessage, () => process.exit(0));
});
