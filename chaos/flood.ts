/**
 * The flood rows of the fault suite (issues 34, 44, 53): one namespace floods
 * a Worker over wait sockets while another namespace's try-lock + release is
 * timed (floodProbe.ts), on both stores, beside the floor: a bare Durable
 * Object in workerd with no holdfast code (bench/floodFloorWorker), which
 * closes a flooding socket at its 20th frame and takes every reconnect,
 * flooded by the same client in the same run.
 *
 * The client is a hostile one (flooder.ts, in its own process): raw TCP, its
 * own WebSocket handshake, masked heartbeats written in batches of 500 as
 * fast as the connection drains, close frames ignored until the connection
 * is gone, back 100 ms after. Each side, in turn: the probe unloaded; then
 * each flood of FLOODS (one flooder, ten, 100 sockets at once from one
 * namespace's two keys on 5 locks, 50 clients churning handshakes with no
 * frame), the probe running through it and on after its end (the flooding
 * process exits, leaving what its kernel still holds to the service) until it
 * is back, to see how soon.
 *
 * What it holds holdfast to (docs/guarantees.md, "A wait socket flood"),
 * under each flood, on each store:
 * - the probe's p50, as a ratio to its unloaded p50, within SLACK x the
 *   floor's ratio under the same flood (never held to less than p50SlackMs
 *   above the unloaded p50), and its p99 within SLACK x the floor's p99
 *   under the same flood (never less than p99SlackMs above the unloaded
 *   p99): see boundOf for why the p99 is not a ratio;
 * - no 5xx and no failed request;
 * - back within 2x its unloaded p50 within RECOVERY_MS of the flood's end,
 *   or no later than the floor if the floor took longer;
 * - a heartbeat flood shed: answered 429 `rate_limited` `socket_messages`;
 *   100 sockets at once: no more admitted than each key's burst of new
 *   sockets (SOCKET_OPEN_BURST_DEFAULT).
 * Flood by flood, the floor then each store, one right after the other, so
 * that all three see the machine as it is then. The floor's Worker is
 * started afresh for each flood (it reads a flood's leftovers long after it:
 * that is its tail, measured, not carried into the next flood); holdfast's
 * Workers run on through the floods and are restarted after them.
 */
import { fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SOCKET_OPEN_BURST_DEFAULT, SOCKET_OPENS_PER_SECOND_DEFAULT } from "../src/limits";
import { startWorkerServer } from "../tools/serve-worker/serve.mjs";
import type { FloodPlan, FloodStats, FlooderMessage } from "./flooder";
import { type Probe, probe, recoveryOf, WARM_UP_MS } from "./floodProbe";
import { CHURN_API_KEY, FLOOD_API_KEY, FLOOD_HUNDRED_API_KEYS, FLOOD_TEN_API_KEY, type Lab } from "./lab";
import { now } from "./time";

/** The rows' name, as --only matches it (`npm run chaos -- --only=flood`). */
export const FLOOD_ROWS =
  "a wait socket flood in another namespace (one flooder, ten, 100 sockets at once, handshake churn; a raw client that ignores closes), beside the bare object's floor";

type FloodName = "one" | "ten" | "hundred" | "churn";

/** A flood: what the flooder process is told (its url and lock prefix aside), and whether it floods frames. */
interface Flood {
  name: FloodName;
  title: string;
  plan: Omit<FloodPlan, "url" | "prefix">;
  /** Heartbeats: answered 429 socket_messages when shed. Churn sends no frame. */
  frames: boolean;
}

const COME_BACK_MS = 100;
const FLOODS: Flood[] = [
  { name: "one", title: "one flooder", frames: true, plan: { keys: [FLOOD_API_KEY], sockets: 1, comeBackMs: COME_BACK_MS, floodFrom: "held" } },
  { name: "ten", title: "ten flooders", frames: true, plan: { keys: [FLOOD_TEN_API_KEY], sockets: 10, comeBackMs: COME_BACK_MS, floodFrom: "held" } },
  {
    name: "hundred",
    title: "100 sockets at once (two keys, 5 locks)",
    frames: true,
    plan: { keys: FLOOD_HUNDRED_API_KEYS, sockets: 100, comeBackMs: COME_BACK_MS, floodFrom: "open", locks: 5 },
  },
  {
    name: "churn",
    title: "handshake churn (50 clients, no frame)",
    frames: false,
    plan: { keys: [CHURN_API_KEY], sockets: 50, comeBackMs: 0, mode: "churn" },
  },
];

/** How long each window lasts, and what runs: the full suite's, or the quick mode's (CI). */
export interface FloodTimings {
  settleMs: number;
  unloadedMs: number;
  floodMs: number;
  /** The probe runs on at least this long after a flood's end... */
  afterMs: number;
  /** ...and until it is back within 2x its unloaded p50, at most this long (a longer tail reads "not within"). */
  afterMaxMs: number;
  /** A p99 bound is never less than this above the unloaded p99 (see P99_SLACK_MS), ms. */
  p99SlackMs: number;
  /** A p50 bound is never less than this above the unloaded p50 (see P50_SLACK_MS), ms. */
  p50SlackMs: number;
  /** A probe unanswered after this counts as failed; its wait, this long, is its latency. */
  probeTimeoutMs: number;
  /** Whether the floor's tail is measured too (holdfast's always is); not: held to RECOVERY_MS alone. */
  floorRecovery: boolean;
  /** The floods run, in order. */
  floods: FloodName[];
}
/** A p50 bound is never less than this above the unloaded figure, ms. */
const P50_SLACK_MS = 2;
/**
 * A p99 bound is never less than this above the unloaded p99, ms. A window's p99 is its two or three slowest
 * probes, so one stall of the machine's decides it: the unloaded p99 alone moved from 10 to 95 ms between runs,
 * while what the rows are for, a flood stalling the other namespace for seconds, is far beyond it.
 */
const P99_SLACK_MS = 50;
/**
 * The quick run's (CI's, maybe on a machine kept busy: npm run ci:busy): 100-150 probes a window, so its p99 is
 * one or two probes; with every core taken the floor's flooder gets little CPU and floods weakly, while sockets
 * opening at once cost holdfast the same few hundred ms as on a quiet machine. Still far below the seconds of
 * stall the rows exist to catch.
 */
const QUICK_P99_SLACK_MS = 500;
/** The quick run's p50 slack, for the same reason (ten sockets opening at once took a Durable p50 from 10 to 31 ms beside busy loops). */
const QUICK_P50_SLACK_MS = 25;
export const FULL_TIMINGS: FloodTimings = {
  settleMs: WARM_UP_MS,
  unloadedMs: 3000,
  floodMs: 5000,
  afterMs: 2000,
  afterMaxMs: 30_000,
  p99SlackMs: P99_SLACK_MS,
  p50SlackMs: P50_SLACK_MS,
  probeTimeoutMs: 10_000,
  floorRecovery: true,
  floods: ["one", "ten", "hundred", "churn"],
};
/**
 * CI's (chaos:quick, about two minutes in all): the two floods that cost most (one flooder and handshake churn
 * are the full run's), shorter windows (100 probes a flood), and the floor's tail not measured (it reads a flood's
 * leftovers for 15-30 s; holdfast is held to RECOVERY_MS, and is back in ms).
 */
export const QUICK_TIMINGS: FloodTimings = {
  settleMs: WARM_UP_MS,
  unloadedMs: 1500,
  floodMs: 2000,
  afterMs: 500,
  afterMaxMs: 1500,
  p99SlackMs: QUICK_P99_SLACK_MS,
  p50SlackMs: QUICK_P50_SLACK_MS,
  // The floor's probes stall for seconds under these floods, and a window waits for its last answers: 3 s of that is enough.
  probeTimeoutMs: 3000,
  floorRecovery: false,
  floods: ["ten", "hundred"],
};
/** holdfast's ratio to its unloaded figure may be this many times the floor's under the same flood. */
export const SLACK = 1.5;
/** The flooder's priority (nice): below the Worker's and the probe's, not so low that a busy machine starves it. */
const FLOODER_NICE = 10;
/** The probe's p50 is back within 2x its unloaded one within this of the flood's end (or no later than the floor). */
const RECOVERY_MS = 2000;
/** Below this many heartbeats sent, a flood did not happen and the row proves nothing. */
const MIN_SENT = 1000;
/** Below this many handshakes, a churn did not happen. */
const MIN_HANDSHAKES = 100;

export type FloodTarget = "floor (bare object)" | "Redis, Worker" | "Durable, Worker";

interface FloodPhase {
  flood: Flood;
  probe: Probe;
  /** From the flood's end until the probe's p50 (over a window of probes) is back within 2x its unloaded one; undefined: not within afterMaxMs. */
  recoveryMs?: number;
  /** Whether the probe ran on after the flood at all (the quick run's floor: not). */
  recoveryMeasured: boolean;
  stats?: FloodStats;
}

interface FloodSide {
  target: FloodTarget;
  unloaded: Probe;
  phases: FloodPhase[];
}

export interface FloodRow {
  side: FloodSide;
  floor: FloodSide;
  failures: string[];
}

/** Runs the flood rows: the floor, then both Worker stores; prints their tables; answers how many rows broke the promise. */
export async function runFloodRows(lab: Lab, timings: FloodTimings = FULL_TIMINGS): Promise<{ runs: number; broken: number }> {
  console.log(`\n## ${FLOOD_ROWS}\n`);
  const rows = await measureFloodRows(
    [
      { target: "Redis, Worker", worker: lab.workers.redis },
      { target: "Durable, Worker", worker: lab.workers.durable },
    ],
    timings,
    () => lab.heal(),
  );
  const out = [summaryTable(rows), "", floodTable(rows), "", ...rows.flatMap((r) => r.failures.map((f) => `- ${r.side.target}: BROKEN: ${f}`))].join(
    "\n",
  );
  console.log(out);
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "latest-flood.md"), `# ${FLOOD_ROWS} (${new Date().toISOString()}, load ${loadNow()})\n\n${out}\n`);
  return { runs: rows.length, broken: rows.filter((r) => r.failures.length).length };
}

/** A Worker to flood: its URL, and a restart so that what a flood left behind cannot reach what runs next. */
export interface FloodWorker {
  readonly url: string;
  restart(): Promise<void>;
}

/**
 * Each target's row beside the floor's, measured flood by flood: for each flood, the floor (a fresh Worker), then
 * each target, one right after the other, so that all see the machine as it is then. Each side's unloaded
 * figure is measured first. The Workers must know the chaos keys (lab.ts), and are restarted at the end. The
 * bench runs it too.
 */
export async function measureFloodRows(
  targets: { target: Exclude<FloodTarget, "floor (bare object)">; worker: FloodWorker }[],
  timings: FloodTimings,
  beforeEach: () => Promise<void> = async () => {},
): Promise<FloodRow[]> {
  const run = `flood-${Date.now().toString(36)}`;
  const floorServer = freshFloor();
  try {
    const floor: FloodSide = { target: "floor (bare object)", unloaded: await unloadedAt(await floorServer.start(), run, timings), phases: [] };
    // Stopped after each use: a floor still reading a flood's leftovers would take the machine from the next side.
    await floorServer.stop();
    const sides: FloodSide[] = [];
    for (const { target, worker } of targets) sides.push({ target, unloaded: await unloadedAt(worker.url, run, timings), phases: [] });
    for (const flood of FLOODS.filter((f) => timings.floods.includes(f.name))) {
      await beforeEach();
      const url = await floorServer.start();
      await probe(url, `${run}-probe`, { forMs: timings.settleMs, timeoutMs: timings.probeTimeoutMs });
      floor.phases.push(await measureFlood(url, `${run}-floor`, flood, backWithin(floor.unloaded), timings, timings.floorRecovery));
      await floorServer.stop();
      for (const [i, { worker }] of targets.entries()) {
        sides[i].phases.push(await measureFlood(worker.url, `${run}-${i}`, flood, backWithin(sides[i].unloaded), timings));
      }
    }
    for (const { worker } of targets) await worker.restart();
    return sides.map((side) => ({ side, floor, failures: verdict(side, floor, timings) }));
  } finally {
    await floorServer.stop();
  }
}

/** The floor: the bare object (bench/floodFloorWorker), in a workerd started afresh for each flood. */
function freshFloor() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  let server: Awaited<ReturnType<typeof startWorkerServer>> | undefined;
  return {
    async start(): Promise<string> {
      await server?.stop();
      server = await startWorkerServer({ vars: {}, projectDir: path.join(root, "bench/floodFloorWorker") });
      return server.url;
    },
    async stop() {
      await server?.stop();
      server = undefined;
    },
  };
}

/** A side's unloaded figure: the probe warmed up (its lock objects made), then measured. */
async function unloadedAt(url: string, run: string, timings: FloodTimings): Promise<Probe> {
  await probe(url, `${run}-probe`, { forMs: timings.settleMs, timeoutMs: timings.probeTimeoutMs });
  return probe(url, `${run}-probe`, { forMs: timings.unloadedMs, timeoutMs: timings.probeTimeoutMs });
}

/** Back: the probe's p50 within 2x the unloaded one (at least P50_SLACK_MS above it). */
const backWithin = (unloaded: Probe) => Math.max(2 * unloaded.p50, unloaded.p50 + P50_SLACK_MS);

/** One flood at `url`: the probe through it, then (`recovery`) on after its end until it is back (or afterMaxMs). */
async function measureFlood(url: string, prefix: string, flood: Flood, back: number, timings: FloodTimings, recovery = true): Promise<FloodPhase> {
  const plan: FloodPlan = { url, prefix: `${prefix}-${flood.name}`, ...flood.plan };
  const flooder = fork(fileURLToPath(new URL("./flooder.ts", import.meta.url)), [JSON.stringify(plan)]);
  // The attacker's machine is not the service's: on the lab's few cores, the flooder yields to the Worker and the probe. Not the
  // lowest priority: with every core kept busy (npm run ci:busy) a flooder at 19 got no CPU at all and sent nothing.
  if (flooder.pid) os.setPriority(flooder.pid, FLOODER_NICE);
  try {
    const during = await probe(url, `${prefix}-probe`, { forMs: timings.floodMs, timeoutMs: timings.probeTimeoutMs });
    const report = new Promise<FloodStats | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 10_000);
      flooder.on("message", (m: FlooderMessage) => {
        clearTimeout(timer);
        resolve(m.stats);
      });
      flooder.on("exit", () => resolve(undefined));
    });
    const stoppedAt = now();
    flooder.send("stop");
    if (!recovery) return { flood, probe: during, stats: await report, recoveryMs: undefined, recoveryMeasured: false };
    const after = probe(url, `${prefix}-probe`, {
      minMs: timings.afterMs,
      maxMs: timings.afterMaxMs,
      timeoutMs: timings.probeTimeoutMs,
      until: (p, unanswered) => recoveryOf(p, unanswered, back, stoppedAt) !== undefined,
    });
    const stats = await report;
    return { flood, probe: during, stats, recoveryMs: recoveryOf(await after, [], back, stoppedAt), recoveryMeasured: true };
  } finally {
    if (flooder.exitCode === null) flooder.kill("SIGKILL");
  }
}

/** What the row holds holdfast to against the floor (see the header). */
function verdict(side: FloodSide, floor: FloodSide, timings: FloodTimings): string[] {
  const failures: string[] = [];
  const u = side.unloaded;
  if (u.fiveXx || u.failed) failures.push(`the probe failed before any flood (${u.firstFailure}): the lab is not sound`);
  for (const phase of side.phases) {
    const floorPhase = floor.phases.find((p) => p.flood.name === phase.flood.name);
    const under = `under ${phase.flood.title}`;
    const p = phase.probe;
    if (!floorPhase) continue;
    for (const q of ["p50", "p99"] as const) {
      const bound = boundOf(q, u, floor.unloaded, floorPhase.probe, timings);
      if (!(p[q] <= bound)) {
        failures.push(
          `${under}, the other namespace's ${q} went from ${ms(u[q])} to ${probeMs(p, p[q])} ms (${ratio(p[q], u[q])}; the floor's ${probeMs(floorPhase.probe, floorPhase.probe[q])} ms, ${ratio(floorPhase.probe[q], floor.unloaded[q])}; bound ${ms(bound)} ms)`,
        );
      }
    }
    if (p.fiveXx) failures.push(`${under}, the other namespace got ${p.fiveXx} 5xx answers`);
    if (p.failed) failures.push(`${under}, ${p.failed} of the other namespace's requests failed (first: ${p.firstFailure})`);
    // The floor's tail where it was measured: not back within the window, at least the window.
    const floorTail = floorPhase.recoveryMs ?? (floorPhase.recoveryMeasured ? timings.afterMaxMs : 0);
    const recoveryBound = Math.max(RECOVERY_MS, floorTail);
    if (phase.recoveryMs === undefined || phase.recoveryMs > recoveryBound) {
      failures.push(
        `${under}, the other namespace was not back within 2x its p50 within ${recoveryBound} ms of the flood's end (${recovered(phase, timings)}; the floor: ${recovered(floorPhase, timings)})`,
      );
    }
    failures.push(...floodHappened(phase, under));
  }
  return failures;
}

/** Whether the flood happened, and was met as promised: shed (429 socket_messages) and, 100 at once, no more let in than the burst. */
function floodHappened(phase: FloodPhase, under: string): string[] {
  const s = phase.stats;
  if (!s) return [`${under}, the flooder did not report what it did`];
  const failures: string[] = [];
  if (!phase.flood.frames) {
    if (s.opened + s.refused < MIN_HANDSHAKES)
      failures.push(`${under}, only ${s.opened + s.refused} handshakes (< ${MIN_HANDSHAKES}): no churn happened`);
    return failures;
  }
  if (s.sent < MIN_SENT) failures.push(`${under}, the flood sent only ${s.sent} heartbeats (< ${MIN_SENT}): no flood happened`);
  if (!Object.keys(s.errors).some((e) => e.startsWith("429 rate_limited socket_messages")))
    failures.push(`${under}, the flood was never answered 429 rate_limited socket_messages: the service did not shed it`);
  // Each key's burst, and what its bucket refilled while the wave came in (on a busy machine, a few hundred ms).
  const burst = phase.flood.plan.keys.length * (SOCKET_OPEN_BURST_DEFAULT + Math.ceil((SOCKET_OPENS_PER_SECOND_DEFAULT * s.firstWaveMs) / 1000));
  if (s.firstWaveOpened > burst)
    failures.push(
      `${under}, ${s.firstWaveOpened} of the ${phase.flood.plan.sockets} sockets sent at once opened within ${s.firstWaveMs} ms (more than the keys' bursts and refills, ${burst})`,
    );
  return failures;
}

/**
 * holdfast's bound for a quantile under a flood. p50: SLACK x the floor's ratio to its unloaded p50, times holdfast's
 * own unloaded p50, at least p50SlackMs above it. p99: SLACK x the floor's p99 under the same flood, at least
 * p99SlackMs above holdfast's unloaded p99. A p99 as a ratio to an unloaded p99 divides by two or three probes of
 * a quiet window, which moved 13-210 ms for the floor alone between runs here; the floor's p99 under the flood is
 * the runtime's own stall, which is what holdfast is held to.
 */
function boundOf(
  q: "p50" | "p99",
  unloaded: Probe,
  floorUnloaded: Probe,
  floorFlooded: Probe,
  slack: Pick<FloodTimings, "p50SlackMs" | "p99SlackMs">,
): number {
  if (q === "p99") return Math.max(SLACK * floorFlooded.p99, unloaded.p99 + slack.p99SlackMs);
  const floorRatio = Math.max(1, floorFlooded.p50 / floorUnloaded.p50);
  return Math.max(SLACK * floorRatio * unloaded.p50, unloaded.p50 + slack.p50SlackMs);
}

/** A figure in ms. */
const ms = (x: number) => (!Number.isFinite(x) ? "not measured" : x < 10 ? x.toFixed(1) : String(Math.round(x)));
/** A probe's figure in ms; one at its timeout reads "> timeout" (it was not answered). */
const probeMs = (p: Probe, x: number) => (x >= p.timeoutMs ? `> ${p.timeoutMs}` : ms(x));
const ratio = (x: number, base: number) => (Number.isFinite(x / base) ? `${(x / base).toFixed(1)}x` : "not measured");
const recovered = (p: FloodPhase, t: FloodTimings) =>
  p.recoveryMs === undefined ? `not within ${t.afterMaxMs} ms` : `${Math.round(p.recoveryMs)} ms`;
const loadNow = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");

/** What a flood met: sessions opened (of the first wave) / handshakes refused / heartbeats sent; the service's answers. */
function metCell(s: FloodStats | undefined, flood: Flood): string {
  if (!s) return "no report";
  const errors =
    Object.entries(s.errors)
      .map(([k, n]) => `${k} x${n}`)
      .join(", ") || "no error";
  const gone = s.closeToGoneMaxMs === undefined ? "" : `; a closed connection gone within ${s.closeToGoneMaxMs} ms`;
  return `${s.opened} (${s.firstWaveOpened} of the first ${flood.plan.sockets} in ${s.firstWaveMs} ms) / ${s.refused} / ${s.sent}; ${errors}${gone}; open / connecting at the end ${s.openAtStop} / ${s.connectingAtStop}`;
}

/** Every side under every flood: the figures, and what the flood met. */
export function floodTable(rows: FloodRow[]): string {
  const line = (c: string[]) => `| ${c.join(" | ")} |`;
  const header = [
    "flood",
    "side",
    "unloaded p50 (p99), ms",
    "under the flood: p50 (p99) ms; ratios",
    "5xx / failed of sent",
    "back within 2x p50 after",
    "what the flood met: sessions opened (of the first wave) / handshakes refused / heartbeats sent; answers",
    "promise",
  ];
  const out = [line(header), line(header.map(() => "---"))];
  const sides = rows.flatMap((r, i) => [
    ...(i === 0 || r.floor !== rows[i - 1].floor ? [{ side: r.floor, promise: "(the floor)" }] : []),
    { side: r.side, promise: r.failures.length ? "BROKEN" : "held" },
  ]);
  for (const flood of FLOODS) {
    for (const { side, promise } of sides) {
      const p = side.phases.find((x) => x.flood.name === flood.name);
      if (!p) continue;
      out.push(
        line([
          flood.title,
          side.target,
          `${probeMs(side.unloaded, side.unloaded.p50)} (${probeMs(side.unloaded, side.unloaded.p99)})`,
          `${probeMs(p.probe, p.probe.p50)} (${probeMs(p.probe, p.probe.p99)}); ${ratio(p.probe.p50, side.unloaded.p50)} / ${ratio(p.probe.p99, side.unloaded.p99)}`,
          `${p.probe.fiveXx} / ${p.probe.failed} of ${p.probe.sent}`,
          !p.recoveryMeasured ? "not measured" : p.recoveryMs === undefined ? "not within the window" : `${Math.round(p.recoveryMs)} ms`,
          metCell(p.stats, flood),
          promise,
        ]),
      );
    }
  }
  return out.join("\n");
}

/** The figures docs/guarantees.md quotes: per flood, each side's p50 and p99 as ratios to unloaded, and how soon it was back. */
function summaryTable(rows: FloodRow[]): string {
  const line = (c: string[]) => `| ${c.join(" | ")} |`;
  const floors = [...new Set(rows.map((r) => r.floor))];
  const columns = [
    ...rows.map((r) => ({ title: `holdfast ${r.side.target.replace(", Worker", "")}`, side: r.side })),
    ...floors.map((f, i) => ({ title: floors.length > 1 ? `floor (before ${rows[i].side.target.replace(", Worker", "")})` : "floor", side: f })),
  ];
  const out = [
    line(["p50 / p99 as ratios to unloaded; back within 2x p50 after the end", ...columns.map((c) => c.title)]),
    line(["---", ...columns.map(() => "---")]),
  ];
  for (const flood of FLOODS) {
    const cells = columns.map(({ side }) => {
      const p = side.phases.find((x) => x.flood.name === flood.name);
      if (!p) return "";
      const admitted = flood.name === "hundred" && p.stats ? `; ${p.stats.firstWaveOpened} of 100 admitted` : "";
      const back = !p.recoveryMeasured ? "back: not measured" : p.recoveryMs === undefined ? "not back" : `${Math.round(p.recoveryMs)} ms`;
      return `${ratio(p.probe.p50, side.unloaded.p50)} / ${ratio(p.probe.p99, side.unloaded.p99)}; ${back}${admitted}`;
    });
    if (cells.some(Boolean)) out.push(line([flood.title, ...cells]));
  }
  out.push(line(["unloaded p50 (p99), ms", ...columns.map(({ side }) => `${ms(side.unloaded.p50)} (${ms(side.unloaded.p99)})`)]));
  return out.join("\n");
}
