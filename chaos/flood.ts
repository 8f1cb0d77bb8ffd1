/**
 * The flood rows of the fault suite (issue 34): one namespace floods a
 * Worker over wait sockets while another namespace's try-locks are timed.
 * What it measures: the other namespace's acquire p50 against 2x its
 * unloaded p50 (at least +2 ms: p50s of a few ms move by that much from
 * run to run), its 5xx and failed requests, on both stores, and how the
 * service ended the flood. What it holds the service to (docs/guarantees.md,
 * "A wait socket flood"): the flood is shed (429 rate_limited, then a
 * close) on both stores, and on the Redis store one kept socket's flood
 * stays within the bound; the rest is reported as beyond the promise.
 *
 * Each row: the flood's sockets open and are held (flooder.ts, in its own
 * process: one kept socket and MANY_SOCKETS more, each on a lock of its
 * own); unloaded, the probe for UNLOADED_MS with them standing idle; then
 * the kept socket sends heartbeats as fast as its connection drains (coming
 * back whenever closed) and the probe runs for FLOOD_MS; then the many join
 * in, the same way, for FLOOD_MS more; then the flood stops and the Worker restarts, so what the flood left behind cannot
 * reach the next row. Opening 200 sockets at once is no message flood, and
 * on bare workerd it alone slows every namespace for a second or two: so it
 * happens before the unloaded window, not in the flooded one.
 * The probe is open-loop (one try-lock every PROBE_EVERY_MS, whether or not
 * the last one was answered), so a stall shows as many slow answers rather
 * than as few samples.
 */
import { fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FloodPlan, FloodReport, FloodStats, FlooderMessage } from "./flooder";
import { API_KEY, FLOOD_API_KEY, type Lab, type RestartableWorker } from "./lab";
import { now, sleep } from "./time";

/** The rows' name, as --only matches it (`npm run chaos -- --only=flood`). */
export const FLOOD_ROWS = "a wait socket flood (heartbeats from one kept socket, messages from many) in another namespace";

/** After the flood's sockets are held, before the unloaded window. */
const SETTLE_MS = 1000;
const UNLOADED_MS = 3000;
const FLOOD_MS = 5000;
const PROBE_EVERY_MS = 20;
/** The probe's lock names, reused in turn: a name comes back after NAMES x PROBE_EVERY_MS, long after its release. */
const PROBE_NAMES = 64;
/** A probe request unanswered after this counts as failed. */
const PROBE_TIMEOUT_MS = 10_000;
const MANY_SOCKETS = 200;
/** Below this many messages sent, a flood did not happen and the row proves nothing. */
const MIN_SENT = 1000;
/** The bound on the p50 under flood: twice the unloaded one, and never less than this above it. */
const FLOOR_MS = 2;

type FloodTarget = "Redis, Worker" | "Durable, Worker";

/** The other namespace's try-locks over one window. */
interface Probe {
  sent: number;
  /** Acquires answered (any status). */
  answered: number;
  p50: number;
  p99: number;
  /** Acquires or releases answered 5xx. */
  fiveXx: number;
  /** Other failures: a 4xx but 409 locked, no answer within PROBE_TIMEOUT_MS (its wait counts as its latency), a broken connection. */
  failed: number;
  firstFailure?: string;
}

interface FloodRow {
  target: FloodTarget;
  unloaded: Probe;
  /** Under the kept socket's flood alone. */
  kept: Probe;
  /** Under the kept socket's and the many's. */
  both: Probe;
  bound: number;
  flood?: FloodReport;
  failures: string[];
  /** Measured and reported, but beyond what docs/guarantees.md promises ("A wait socket flood"): no exit 1. */
  beyond: string[];
}

/** Runs the flood rows on both Worker stores, prints their table; answers how many rows broke the promise. */
export async function runFloodRows(lab: Lab): Promise<{ runs: number; broken: number }> {
  console.log(`\n## ${FLOOD_ROWS}\n`);
  const rows: FloodRow[] = [];
  for (const target of ["Redis, Worker", "Durable, Worker"] as const) {
    await lab.heal();
    const worker = target === "Redis, Worker" ? lab.workers.redis : lab.workers.durable;
    rows.push(await floodRow(target, worker));
  }
  const out = [table(rows), "", ...rows.flatMap(notes)].join("\n");
  console.log(out);
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "latest-flood.md"), `# ${FLOOD_ROWS} (${new Date().toISOString()})\n\n${out}\n`);
  return { runs: rows.length, broken: rows.filter((r) => r.failures.length).length };
}

async function floodRow(target: FloodTarget, worker: RestartableWorker): Promise<FloodRow> {
  const run = `flood-${Date.now().toString(36)}`;
  const plan: FloodPlan = { url: worker.url, key: FLOOD_API_KEY, prefix: run, many: MANY_SOCKETS, comeBackMs: 100 };
  const flooder = fork(fileURLToPath(new URL("./flooder.ts", import.meta.url)), [JSON.stringify(plan)]);
  // The attacker's machine is not the service's: on the lab's few cores, the flooder gets only what the Worker and the probe leave.
  if (flooder.pid) os.setPriority(flooder.pid, 19);
  const told = <T extends FlooderMessage["type"]>(type: T, withinMs: number) =>
    new Promise<Extract<FlooderMessage, { type: T }> | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), withinMs);
      flooder.on("message", (m: FlooderMessage) => {
        if (m.type !== type) return;
        clearTimeout(timer);
        resolve(m as Extract<FlooderMessage, { type: T }>);
      });
      flooder.on("exit", () => resolve(undefined));
    });
  const failures: string[] = [];
  const beyond: string[] = [];
  let unloaded: Probe;
  let kept: Probe;
  let both: Probe;
  let flood: FloodReport | undefined;
  try {
    const ready = await told("ready", 40_000);
    if (!ready?.held) failures.push("the flood did not happen: none of its sockets was held");
    // Unloaded: the flood's sockets stand idle, held; what was left of opening them has SETTLE_MS to drain.
    await probe(worker.url, `${run}-probe`, SETTLE_MS);
    unloaded = await probe(worker.url, `${run}-probe`, UNLOADED_MS);
    flooder.send("go kept");
    kept = await probe(worker.url, `${run}-probe`, FLOOD_MS);
    flooder.send("go many");
    both = await probe(worker.url, `${run}-probe`, FLOOD_MS);
    const stopped = told("report", 10_000);
    flooder.send("stop");
    flood = (await stopped)?.report;
  } finally {
    if (flooder.exitCode === null) flooder.kill();
  }
  const bound = Math.max(2 * unloaded.p50, unloaded.p50 + FLOOR_MS);
  // A flood on a service that does not shed it can leave the Worker busy long after: the next row starts clean.
  await worker.restart();
  if (!flood) failures.push("the flooder did not report what it did");
  else {
    if (flood.kept.sent < MIN_SENT) failures.push(`the kept socket sent only ${flood.kept.sent} heartbeats (< ${MIN_SENT}): no flood`);
  }
  if (unloaded.fiveXx || unloaded.failed) failures.push(`the probe failed before any flood (${unloaded.firstFailure}): the lab is not sound`);
  // The promise (docs/guarantees.md, "A wait socket flood"): the flood is shed (refused 429 and closed) on
  // both stores, and one kept socket's flood leaves another namespace's acquires on the Redis store within the
  // bound. On the Durable store, and under the many's flood on either, one workerd process is outrun by what
  // it reads before any object can refuse it: measured and reported, not promised.
  if (flood?.kept.held && !flood.kept.errors["429 rate_limited"]) {
    failures.push("the kept socket's flood was never answered 429 rate_limited: the service did not shed it");
  }
  if (flood && !Object.keys(flood.kept.closes).length) failures.push("the service never closed the flooding kept socket");
  for (const [under, p, promised] of [
    ["the kept socket's flood", kept, target === "Redis, Worker"],
    ["both floods", both, false],
  ] as const) {
    const into = promised ? failures : beyond;
    if (!p.answered) into.push(`under ${under}, the other namespace's probe got no answer at all`);
    if (p.p50 > bound)
      into.push(`under ${under}, the other namespace's acquire p50 went from ${ms(unloaded.p50)} to ${ms(p.p50)} ms (bound ${ms(bound)} ms)`);
    if (p.fiveXx) into.push(`under ${under}, the other namespace got ${p.fiveXx} 5xx answers`);
    if (p.failed) into.push(`under ${under}, ${p.failed} of the other namespace's requests failed (first: ${p.firstFailure})`);
  }
  // A Worker the kept socket stalls may never get to the many: that row is broken anyway. One that holds must have had both floods.
  if (flood && !failures.length && flood.many.sent < MIN_SENT) {
    failures.push(`the ${MANY_SOCKETS} sockets sent only ${flood.many.sent} messages (< ${MIN_SENT}): no flood from them`);
  }
  return { target, unloaded, kept, both, bound, flood, failures, beyond };
}

/** The other namespace ("chaos"): a try-lock (waitMs 0) and its release every PROBE_EVERY_MS for `forMs`, open-loop. */
async function probe(url: string, prefix: string, forMs: number): Promise<Probe> {
  const result: Probe = { sent: 0, answered: 0, p50: Number.NaN, p99: Number.NaN, fiveXx: 0, failed: 0 };
  const latencies: number[] = [];
  const fail = (what: string) => {
    result.failed++;
    result.firstFailure ??= what;
  };
  const call = async (name: string, op: string, body: unknown) => {
    const res = await fetch(`${url}/v1/locks/${encodeURIComponent(name)}/${op}`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    const json = (await res.json().catch(() => ({}))) as { token?: string; error?: string };
    if (res.status >= 500) result.fiveXx++;
    else if (res.status !== 200 && res.status !== 409) fail(`${op} ${res.status} ${json.error}`);
    return { status: res.status, json };
  };
  const attempt = async (i: number) => {
    const name = `${prefix}-${i % PROBE_NAMES}`;
    const t0 = now();
    try {
      const acquired = await call(name, "acquire", { ttlMs: 5000, waitMs: 0 });
      latencies.push(now() - t0);
      result.answered++;
      if (acquired.status === 200) await call(name, "release", { token: acquired.json.token });
    } catch (err) {
      // Unanswered: it waited at least this long, which the p50 must see (else a stall would shrink to no samples).
      if (err instanceof Error && err.name === "TimeoutError") latencies.push(now() - t0);
      fail(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    }
  };
  const inFlight: Promise<void>[] = [];
  const start = now();
  for (let i = 0; start + i * PROBE_EVERY_MS < start + forMs; i++) {
    await sleep(Math.max(0, start + i * PROBE_EVERY_MS - now()));
    result.sent++;
    inFlight.push(attempt(i));
  }
  await Promise.all(inFlight);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  result.p50 = at(0.5);
  result.p99 = at(0.99);
  return result;
}

/** A figure in ms; one at the probe's timeout reads "> timeout" (it was not answered). */
const ms = (x: number) =>
  !Number.isFinite(x) ? "not measured" : x >= PROBE_TIMEOUT_MS ? `> ${PROBE_TIMEOUT_MS}` : x < 10 ? x.toFixed(1) : String(Math.round(x));

const HEADER = [
  "store, client",
  "other namespace's acquire p50 unloaded, ms (p99)",
  "bound, ms (2x, at least +2 ms)",
  "under the kept socket's flood: p50 ms (p99), ratio; 5xx / failed",
  "under both floods: p50 ms (p99), ratio; 5xx / failed",
  "kept socket: held / heartbeats sent / answered",
  "kept socket: how the service ended it",
  `${MANY_SOCKETS} sockets more: opened / refused / held / heartbeats sent / answered`,
  `${MANY_SOCKETS} sockets more: how the service ended them`,
  "promise",
];

function table(rows: FloodRow[]): string {
  const line = (c: string[]) => `| ${c.join(" | ")} |`;
  const under = (p: Probe, u: Probe) => {
    const ratio = p.p50 / u.p50;
    const x = Number.isFinite(ratio) ? `${p.p50 >= PROBE_TIMEOUT_MS ? "> " : ""}${ratio.toFixed(1)}x` : "not measured";
    return `${ms(p.p50)} (${ms(p.p99)}), ${x}; ${p.fiveXx} / ${p.failed} of ${p.sent}`;
  };
  const body = rows.map((r) => {
    const { unloaded: u, flood } = r;
    return line([
      r.target,
      `${ms(u.p50)} (${ms(u.p99)})`,
      ms(r.bound),
      under(r.kept, u),
      under(r.both, u),
      flood ? `${flood.kept.held} / ${flood.kept.sent} / ${flood.kept.answered}` : "no report",
      flood ? ended(flood.kept) : "no report",
      flood ? `${flood.many.opened} / ${flood.many.refused} / ${flood.many.held} / ${flood.many.sent} / ${flood.many.answered}` : "no report",
      flood ? ended(flood.many) : "no report",
      r.failures.length ? "BROKEN" : r.beyond.length ? "held (and beyond it, see below)" : "held",
    ]);
  });
  return [line(HEADER), line(HEADER.map(() => "---")), ...body].join("\n");
}

/** What the service did to a flood: its error messages and closes, and how soon it first closed one. */
function ended(s: FloodStats): string {
  const list = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} x${n}`)
      .join(", ");
  const parts = [
    Object.keys(s.errors).length ? `errors: ${list(s.errors)}` : "no error message",
    Object.keys(s.closes).length ? `closed: ${list(s.closes)} (first after ${s.firstCloseAfterMs} ms)` : "never closed",
  ];
  if (s.openAtStop) parts.push(`${s.openAtStop} still open at the end`);
  if (s.connectingAtStop) parts.push(`${s.connectingAtStop} handshakes never answered`);
  return parts.join("; ");
}

function notes(r: FloodRow): string[] {
  return [
    ...r.failures.map((f) => `- ${r.target}: BROKEN: ${f}`),
    ...r.beyond.map((f) => `- ${r.target}: beyond the promise (docs/guarantees.md, "A wait socket flood"): ${f}`),
  ];
}
