/**
 * The flow row (issue 56): 32 clients on one flow name with concurrency 4
 * and a rate of 20 per 1 s, each taking a slot (waiting in line), calling a
 * resource that counts its concurrent callers for 100 ms while it still holds
 * by its own clock, and giving the slot back, for 30 s on each store a flow
 * runs on, while the suite's faults marked `flow` (faults.ts) that apply to
 * that store are injected one after another, each healed before the next.
 * It checks what a flow limit promises (docs/flow-limits.md):
 * - 0 windows of 1 s with more than 20 grants, over the grant times the store
 *   reported (startedAt, its clock); and each of those times must lie between
 *   its client's asking and its answer, so the clients' own view vouches for
 *   them (one machine, one clock: these faults leave the store's clock alone);
 * - 0 moments over 4 as the resource saw them (a caller entering while 4 are in);
 * - fences rising: in the store's start order, and in real time (a grant asked
 *   for after another came back has the larger fence, as checker.ts reads it);
 * - no request hung, and every fault took effect.
 * It prints the achieved start rate against R over the stretches without a
 * fault (the goal is 0.9 R while clients wait: a figure, not a promise, on a
 * shared machine), and over the whole run.
 *
 * --quick: one run for each fault marked flow.quick, on its quick target, a
 * few seconds each.
 */
import { reportRows } from "./rowReport";
import { RedisStore } from "../src/index";
import { overRate } from "../test/kinds/flow/windows";
import { check } from "./checker";
import { FAULTS, type Fault, type FaultRun } from "./faults";
import { type FlowClient, type FlowOutcome, libraryFlowClient, workerFlowClient } from "./flowClients";
import { History, type Outcome } from "./history";
import { API_KEY, type Lab, STORE_TIMEOUT_MS, type TargetName, upstash } from "./lab";
import { now, sleep } from "./time";

const CLIENTS = 32;
const LIMIT = { concurrency: 4, rate: { count: 20, perMs: 1000 } };
const CALL_MS = 100;
/** A slot's lease, and each client's wait: a line of 32 at 20 starts a second moves in about 1.6 s. */
const TTL_MS = 3000;
const WAIT_MS = 2500;
/** A call begins only this long before the lease's end by the caller's own clock, at the latest: a late timer has room. */
const CALL_MARGIN_MS = 200;

export const FLOW_ROW = `a flow limit: ${CLIENTS} clients on one name, concurrency ${LIMIT.concurrency}, ${LIMIT.rate.count} starts per ${LIMIT.rate.perMs} ms, calls of ${CALL_MS} ms`;

/** Where a flow runs: the quorum is the mutex's alone. */
const FLOW_TARGETS: TargetName[] = ["Redis, library", "Redis, Worker", "Durable, Worker"];

interface Timing {
  /** Each run lasts at least this long (the faults may take longer). */
  runMs: number;
  beforeMs: number;
  /** After each heal: lapsed slots free and the line moves again before the next fault. */
  afterMs: number;
}
const FULL: Timing = { runMs: 30_000, beforeMs: 2000, afterMs: 2000 };
const QUICK: Timing = { runMs: 0, beforeMs: 2000, afterMs: 2000 };

interface Grant {
  fence: number;
  /** The store's grant time (its clock, epoch ms), and when its client asked and was answered (the suite's epoch ms). */
  startedAt: number;
  askedAt: number;
  answeredAt: number;
}

interface FlowRow {
  target: TargetName;
  faults: string[];
  seconds: number;
  grants: number;
  windowsOver: number;
  firstWindowOver?: string;
  /** Grant times the store reported outside the time its client asked and was answered. */
  outsideView: number;
  firstOutside?: string;
  most: number;
  momentsOver: number;
  fenceBackwards: number;
  fenceRepeats: number;
  outOfStartOrder: number;
  /** Starts per second without a fault, and over the whole run. */
  steadyRate: number;
  rate: number;
  /** Grants answered too late to call within their lease (by the caller's clock). */
  late: number;
  unavailable: number;
  errors: number;
  firstError?: string;
  hung: number;
  notes: string[];
  failures: string[];
}

/** The resource the slots guard: it counts its callers inside at once. */
class CallerCounter {
  inside = 0;
  most = 0;
  momentsOver = 0;

  async call(ms: number): Promise<void> {
    this.inside++;
    this.most = Math.max(this.most, this.inside);
    if (this.inside > LIMIT.concurrency) this.momentsOver++;
    await sleep(ms);
    this.inside--;
  }
}

function flowClient(lab: Lab, target: TargetName): FlowClient {
  if (target === "Redis, library") return libraryFlowClient(new RedisStore(upstash(lab.nodes[0]), { timeoutMs: STORE_TIMEOUT_MS }), LIMIT, "chaos");
  const worker = target === "Redis, Worker" ? lab.workers.redis : lab.workers.durable;
  return workerFlowClient(() => worker.url, API_KEY, LIMIT);
}

/** A flow answer as the history keeps it (checker.ts): a grant's store start is its startedAt. */
const asOutcome = (o: FlowOutcome): Outcome =>
  o.kind === "granted" ? { kind: "granted", token: o.token, fence: o.fence, ttlMs: o.ttlMs, expiresAt: o.expiresAt, storeStart: o.startedAt } : o;

async function flowRun(lab: Lab, target: TargetName, faults: Fault[], timing: Timing, quick: boolean): Promise<FlowRow> {
  await lab.heal();
  const name = `chaos-flow-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const client = flowClient(lab, target);
  const history = new History();
  const grants: Grant[] = [];
  const resource = new CallerCounter();
  let late = 0;
  let stopped = false;
  const loop = async (i: number) => {
    while (!stopped) {
      const sentAt = now();
      const askedAt = Date.now();
      const got = await client.acquire(name, TTL_MS, WAIT_MS);
      history.record({
        client: i,
        op: "acquire",
        token: got.kind === "granted" ? got.token : undefined,
        invokedAt: sentAt,
        completedAt: now(),
        outcome: asOutcome(got),
      });
      if (got.kind !== "granted") {
        await sleep(got.kind === "busy" ? 2 + Math.random() * 8 : 20 + Math.random() * 30);
        continue;
      }
      grants.push({ fence: got.fence, startedAt: got.startedAt, askedAt, answeredAt: Date.now() });
      // Its lease began no sooner than it asked: it calls only while that surely holds.
      if (now() + CALL_MS + CALL_MARGIN_MS < sentAt + got.ttlMs) await resource.call(CALL_MS);
      else late++;
      const releasedAt = now();
      const released = await client.release(name, got.token);
      history.record({ client: i, op: "release", token: got.token, invokedAt: releasedAt, completedAt: now(), outcome: asOutcome(released) });
    }
  };
  const run: FaultRun = { lab, pausing: false, disconnecting: false, notes: [], failures: [], history, window: { from: 0, to: 0 } };
  const startedAt = Date.now();
  const workload = Promise.all(Array.from({ length: CLIENTS }, (_, i) => loop(i)));
  /** Epoch ms from each fault's injection to the end of its window after. */
  const faulted: Array<[number, number]> = [];
  await sleep(timing.beforeMs);
  for (const fault of faults) {
    const from = Date.now();
    await fault.inject(run, target);
    await sleep(quick ? (fault.quick.lastsMs ?? fault.lastsMs) : fault.lastsMs);
    await fault.heal(run, target, name);
    faulted.push([from, Date.now() + timing.afterMs]);
    await sleep(timing.afterMs);
  }
  await sleep(Math.max(0, startedAt + timing.runMs - Date.now()));
  const endedAt = Date.now();
  stopped = true;
  await workload;

  const report = check(history, []);
  const over = overRate(
    grants.map((g) => g.startedAt),
    LIMIT.rate,
  );
  // Date.now() is whole ms on both sides: a ms either way is the rounding.
  const outside = grants.filter((g) => g.startedAt < g.askedAt - 1 || g.startedAt > g.answeredAt + 1);
  const byStart = [...grants].sort((a, b) => a.startedAt - b.startedAt || a.fence - b.fence);
  const outOfStartOrder = byStart.filter((g, i) => i > 0 && g.fence <= byStart[i - 1].fence).length;
  const inFault = (t: number) => faulted.some(([from, to]) => t >= from && t < to);
  const faultMs = faulted.reduce((ms, [from, to]) => ms + Math.min(to, endedAt) - Math.min(from, endedAt), 0);
  const steady = grants.filter((g) => g.startedAt >= startedAt && g.startedAt < endedAt && !inFault(g.startedAt)).length;
  const row: FlowRow = {
    target,
    faults: faults.map((f) => f.name),
    seconds: (endedAt - startedAt) / 1000,
    grants: grants.length,
    windowsOver: over.length,
    firstWindowOver: over[0] && `${over[0].length} grants from ${over[0][0]} to ${over[0][over[0].length - 1]} (store ms)`,
    outsideView: outside.length,
    firstOutside: outside[0] && `granted at ${outside[0].startedAt}, asked at ${outside[0].askedAt}, answered at ${outside[0].answeredAt}`,
    most: resource.most,
    momentsOver: resource.momentsOver,
    fenceBackwards: report.fenceBackwards,
    fenceRepeats: report.fenceRepeats,
    outOfStartOrder,
    steadyRate: steady / Math.max(0.001, (endedAt - startedAt - faultMs) / 1000),
    rate: grants.filter((g) => g.startedAt < endedAt).length / ((endedAt - startedAt) / 1000),
    late,
    unavailable: report.unavailable,
    errors: report.errors,
    firstError: report.firstError,
    hung: report.hung,
    notes: run.notes,
    failures: [...run.failures],
  };
  row.failures.push(...promisesBroken(row));
  return row;
}

function promisesBroken(r: FlowRow): string[] {
  const out: string[] = [];
  if (r.windowsOver)
    out.push(
      `${r.windowsOver} windows of ${LIMIT.rate.perMs} ms held more than ${LIMIT.rate.count} grants (store times; first: ${r.firstWindowOver})`,
    );
  if (r.outsideView) out.push(`${r.outsideView} grant times the store reported fell outside their client's request (first: ${r.firstOutside})`);
  if (r.momentsOver) out.push(`${r.momentsOver} callers entered the resource with ${LIMIT.concurrency} already in (most at once: ${r.most})`);
  if (r.fenceBackwards || r.fenceRepeats)
    out.push(`fences went backwards ${r.fenceBackwards} times and repeated ${r.fenceRepeats} times in real time`);
  if (r.outOfStartOrder) out.push(`${r.outOfStartOrder} fences did not rise in the store's start order`);
  if (r.hung) out.push(`${r.hung} requests hung`);
  if (r.grants === 0) out.push("no grant at all");
  return out;
}

const HEADER = [
  "store, client",
  "faults",
  "grants",
  `1 s windows over R (store times)`,
  "store times outside the clients' view",
  `most in the resource at once (N ${LIMIT.concurrency})`,
  "fences back / repeated / out of start order",
  `start rate without a fault (whole run), R ${LIMIT.rate.count}/s`,
  "granted too late to call",
  "503s",
  "other errors",
  "hung",
  "promises",
];

function table(rows: FlowRow[]): string {
  const line = (c: string[]) => `| ${c.join(" | ")} |`;
  const cells = rows.map((r) => [
    r.target,
    `${r.faults.length} (${r.seconds.toFixed(1)} s)`,
    String(r.grants),
    String(r.windowsOver),
    String(r.outsideView),
    String(r.most),
    `${r.fenceBackwards} / ${r.fenceRepeats} / ${r.outOfStartOrder}`,
    `${r.steadyRate.toFixed(1)}/s = ${(r.steadyRate / LIMIT.rate.count).toFixed(2)} R (${r.rate.toFixed(1)}/s)`,
    String(r.late),
    String(r.unavailable),
    String(r.errors),
    String(r.hung),
    r.failures.length ? "BROKEN" : "held",
  ]);
  return [line(HEADER), line(HEADER.map(() => "---")), ...cells.map(line)].join("\n");
}

/** The runs: in full, each flow store for 30 s under every flow fault that applies to it; quick, each flow.quick fault on its quick target. */
function plan(quick: boolean): Array<{ target: TargetName; faults: Fault[] }> {
  if (quick)
    return FAULTS.filter((f) => f.flow?.quick && FLOW_TARGETS.includes(f.quick.target)).map((f) => ({ target: f.quick.target, faults: [f] }));
  return FLOW_TARGETS.map((target) => ({ target, faults: FAULTS.filter((f) => f.flow && f.targets.includes(target)) }));
}

export async function runFlowRows(lab: Lab, quick: boolean): Promise<{ runs: number; broken: number }> {
  console.log(`\n## ${FLOW_ROW}${quick ? " (quick: one fault a run)" : ", 30 s on each store under its faults"}\n`);
  const rows: FlowRow[] = [];
  for (const { target, faults } of plan(quick)) rows.push(await flowRun(lab, target, faults, quick ? QUICK : FULL, quick));
  return reportRows(FLOW_ROW, "flow", quick, rows, table);
}
