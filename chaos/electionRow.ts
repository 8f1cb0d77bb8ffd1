/**
 * The election row (issue 55): 8 campaigners in one election, each doing its
 * work at a fenced resource only while it leads by its own clock (the send
 * time of its last confirmed campaign or heartbeat plus the TTL), proclaiming
 * a new value now and then, and then resigning or (one time in four) going
 * silent so that its lease lapses; a resigned leader now and then tries one
 * more proclaim with its old token, which must be refused. 3 observers follow
 * the election from position 0 (client.observe over the Worker's watch
 * socket, resuming by itself; through the library, a loop reading the
 * history). On each store elections run on, while the suite's faults marked
 * `flow` (faults.ts: those that keep the store's data and clock) that apply
 * to it are injected one after another, each healed before the next.
 * It checks what an election promises (docs/API.md, "Elections"):
 * - one leader at a time, as the fenced resource saw it: no write refused (a
 *   lower term after a higher one), no write accepted below a term already
 *   granted (checker.ts), no leader at work while another's lease, by that
 *   one's own clock, still held; terms rising in real time, no overlap in
 *   store time (checker.ts on the campaigns, heartbeats and resigns);
 * - no resigned leader's proclaim accepted;
 * - every observer: positions rising, no term going back, no change skipped
 *   unless marked `missed`, nothing told that no campaigner was granted or
 *   proclaimed; two observers agree at every position both were told; an
 *   observer told everything (nothing missed) was told every term granted;
 *   and each caught up with the history's last position after the run.
 * It prints the handoffs (by resign, by lapse; after a resign, how long until
 * the next leader's grant came back) and each observer's count.
 *
 * --quick: one run for each fault marked flow.quick, through the Worker where
 * the fault applies there (plan), a few seconds each.
 */
import { reportRows } from "./rowReport";
import type { ElectionChange } from "../src/client/index";
import { Election, RedisStore } from "../src/index";
import { check } from "./checker";
import {
  type ElectionClient,
  type ElectionOutcome,
  type ElectionWatcher,
  libraryElectionClient,
  libraryObserver,
  workerElectionClient,
  workerObserver,
} from "./electionClients";
import { FAULTS, type Fault, type FaultRun } from "./faults";
import { FencedResource } from "./fencedResource";
import { History, type Outcome } from "./history";
import { API_KEY, type Lab, STORE_TIMEOUT_MS, type TargetName, upstash } from "./lab";
import { now, sleep } from "./time";

const CAMPAIGNERS = 8;
const OBSERVERS = 3;
const TTL_MS = 1500;
const WAIT_MS = 3000;
/** One piece of work at the resource, begun only this long before the lease's end by the leader's clock, at the latest. */
const WORK_MS = 40;
const WORK_MARGIN_MS = 200;
/** A term's work lasts this long (and a random part as much again), then its leader resigns, or lapses one time in LAPSE_EVERY. */
const TERM_MS = 300;
const LAPSE_EVERY = 4;
/** Before a piece of work, a proclaim this often; after a resign, a proclaim with the old token this often. */
const PROCLAIM_SHARE = 0.15;
const STALE_PROCLAIM_SHARE = 0.5;
const STALE_PROCLAIM_AFTER_MS = 200;
const LIBRARY_NAMESPACE = "chaos";
/** After the run, how long the observers have to catch up with the history's last position. */
const CATCH_UP_MS = 10_000;

export const ELECTION_ROW = `an election: ${CAMPAIGNERS} campaigners on one name, ${OBSERVERS} observers, leases of ${TTL_MS} ms`;

const ELECTION_TARGETS: TargetName[] = ["Redis, library", "Redis, Worker", "Durable, Worker"];

interface Timing {
  runMs: number;
  beforeMs: number;
  afterMs: number;
}
const FULL: Timing = { runMs: 30_000, beforeMs: 2000, afterMs: 2000 };
const QUICK: Timing = { runMs: 0, beforeMs: 1000, afterMs: 1500 };

interface Grant {
  client: number;
  term: number;
  answeredAt: number;
}

/** The resource the leaders work at: fenced by term, and it knows who is at work and until when that one surely leads. */
class LeaderResource {
  readonly fenced = new FencedResource();
  private readonly atWork = new Map<number, { term: number; leadsUntil: number }>();
  twoAtWork = 0;
  firstTwo?: string;

  async work(client: number, term: number, leadsUntil: number): Promise<"done" | "late"> {
    const at = now();
    for (const [other, w] of this.atWork) {
      if (other === client || w.leadsUntil <= at) continue;
      this.twoAtWork++;
      this.firstTwo ??= `term ${term} (campaigner ${client}) began work while term ${w.term} (campaigner ${other}) led for ${Math.round(w.leadsUntil - at)} ms more by its clock`;
    }
    this.atWork.set(client, { term, leadsUntil });
    this.fenced.write(client, term, at);
    await sleep(WORK_MS);
    this.atWork.delete(client);
    // A timer late past the lease's end (a busy machine): that write is not made.
    if (now() >= leadsUntil) return "late";
    this.fenced.write(client, term, now());
    return "done";
  }
}

interface ElectionRunRow {
  target: TargetName;
  faults: string[];
  seconds: number;
  terms: number;
  resigns: number;
  lapses: number;
  handoffP50: number;
  handoffP99: number;
  proclaims: number;
  writesOk: number;
  writesRefused: number;
  staleAccepted: number;
  twoAtWork: number;
  firstTwo?: string;
  late: number;
  fenceBackwards: number;
  fenceRepeats: number;
  overlaps: number;
  firstOverlap?: string;
  staleProclaimsAccepted: number;
  observers: string[];
  unavailable: number;
  errors: number;
  firstError?: string;
  hung: number;
  notes: string[];
  failures: string[];
}

function clients(
  lab: Lab,
  target: TargetName,
): { client: ElectionClient; observer: (name: string) => ElectionWatcher; lastPosition: (name: string) => Promise<number> } {
  if (target === "Redis, library") {
    const store = new RedisStore(upstash(lab.nodes[0]), { timeoutMs: STORE_TIMEOUT_MS });
    return {
      client: libraryElectionClient(store, LIBRARY_NAMESPACE),
      observer: (name) => libraryObserver(store, LIBRARY_NAMESPACE, name, 50),
      lastPosition: async (name) => (await new Election(store, name, { namespace: LIBRARY_NAMESPACE }).leader()).position,
    };
  }
  const worker = target === "Redis, Worker" ? lab.workers.redis : lab.workers.durable;
  return {
    client: workerElectionClient(() => worker.url, API_KEY),
    observer: (name) => workerObserver(() => worker.url, API_KEY, name),
    lastPosition: async (name) => {
      const res = await fetch(`${worker.url}/v1/elections/${encodeURIComponent(name)}`, { headers: { authorization: `Bearer ${API_KEY}` } });
      return Number(((await res.json()) as { position: number }).position);
    },
  };
}

/** An election answer as the history keeps it (checker.ts). */
const asOutcome = (o: ElectionOutcome): Outcome => (o.kind === "ok" ? { kind: "ok", expiresAt: o.expiresAt } : o);

async function electionRun(lab: Lab, target: TargetName, faults: Fault[], timing: Timing, quick: boolean): Promise<ElectionRunRow> {
  await lab.heal();
  const name = `chaos-election-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const { client, observer, lastPosition } = clients(lab, target);
  const history = new History();
  const resource = new LeaderResource();
  const grants: Grant[] = [];
  /**
   * What an observer may be told: a campaign's value at any term (a grant whose answer was lost is
   * a change all the same; each campaign's value is its own), or a (term, value) proclaimed.
   */
  const said = new Set<string>();
  const resignsAt: number[] = [];
  let lapses = 0;
  let proclaims = 0;
  let late = 0;
  let staleProclaimsAccepted = 0;
  let stopped = false;
  const observers = Array.from({ length: OBSERVERS }, () => observer(name));

  const lead = async (i: number, term: number, token: string, sentAt: number, round: number) => {
    let confirmedAt = sentAt;
    const lapse = Math.random() < 1 / LAPSE_EVERY;
    const until = now() + TERM_MS * (1 + Math.random());
    let lost = false;
    for (let k = 1; !stopped && now() < until; k++) {
      if (!lapse && now() - confirmedAt > TTL_MS / 3) {
        const hbAt = now();
        const r = await client.heartbeat(name, token, TTL_MS);
        history.record({ client: i, op: "heartbeat", token, invokedAt: hbAt, completedAt: now(), outcome: asOutcome(r) });
        if (r.kind === "ok") confirmedAt = hbAt;
        if (r.kind === "lost") lost = true;
      }
      if (lost || now() + WORK_MS + WORK_MARGIN_MS >= confirmedAt + TTL_MS) break;
      if (Math.random() < PROCLAIM_SHARE) {
        const value = `c${i}.${round}.${k}`;
        said.add(`${term} ${value}`);
        proclaims++;
        if ((await client.proclaim(name, token, value)).kind === "lost") lost = true;
        if (lost || now() + WORK_MS + WORK_MARGIN_MS >= confirmedAt + TTL_MS) break;
      }
      if ((await resource.work(i, term, confirmedAt + TTL_MS)) === "late") late++;
    }
    if (lapse && !lost) {
      lapses++;
      return;
    }
    if (lost) return;
    const resignAt = now();
    const r = await client.resign(name, token);
    history.record({ client: i, op: "release", token, invokedAt: resignAt, completedAt: now(), outcome: asOutcome(r) });
    if (r.kind !== "ok") return;
    resignsAt.push(resignAt);
    // Only after a resign the store confirmed: one that failed may still lead. A moment later, so
    // that through the library (its waits poll) the next leader has often come in by then.
    if (Math.random() < STALE_PROCLAIM_SHARE) {
      await sleep(Math.random() * STALE_PROCLAIM_AFTER_MS);
      const value = `c${i}.${round}.after`;
      said.add(`${term} ${value}`);
      if ((await client.proclaim(name, token, value)).kind === "ok") staleProclaimsAccepted++;
    }
  };

  const campaigner = async (i: number) => {
    for (let round = 1; !stopped; round++) {
      const value = `c${i}.${round}`;
      said.add(value);
      const sentAt = now();
      const got = await client.campaign(name, value, TTL_MS, WAIT_MS);
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
      grants.push({ client: i, term: got.fence, answeredAt: now() });
      await lead(i, got.fence, got.token, sentAt, round);
    }
  };

  const run: FaultRun = { lab, pausing: false, disconnecting: false, notes: [], failures: [], history, window: { from: 0, to: 0 } };
  const startedAt = Date.now();
  const workload = Promise.all(Array.from({ length: CAMPAIGNERS }, (_, i) => campaigner(i)));
  await sleep(timing.beforeMs);
  for (const fault of faults) {
    await fault.inject(run, target);
    await sleep(quick ? (fault.quick.lastsMs ?? fault.lastsMs) : fault.lastsMs);
    await fault.heal(run, target, name);
    await sleep(timing.afterMs);
  }
  await sleep(Math.max(0, startedAt + timing.runMs - Date.now()));
  stopped = true;
  await workload;
  const seconds = (Date.now() - startedAt) / 1000;

  // Every observer catches up with the history's last position (the service is whole again).
  const last = await lastPosition(name).catch(() => Number.NaN);
  const caughtUpBy = now() + CATCH_UP_MS;
  const reached = (w: ElectionWatcher) => (w.changes.at(-1)?.position ?? 0) >= last;
  while (now() < caughtUpBy && !observers.every((w) => reached(w) || w.failure)) await sleep(50);
  for (const w of observers) w.close();

  const report = check(history, resource.fenced.log);
  const handoffs = resignsAt.map((r) => grants.find((g) => g.answeredAt > r)).flatMap((g, j) => (g ? [g.answeredAt - resignsAt[j]] : []));
  const row: ElectionRunRow = {
    target,
    faults: faults.map((f) => f.name),
    seconds,
    terms: grants.length,
    resigns: resignsAt.length,
    lapses,
    handoffP50: percentile(handoffs, 0.5),
    handoffP99: percentile(handoffs, 0.99),
    proclaims,
    writesOk: report.writesAccepted,
    writesRefused: report.writesRefused,
    staleAccepted: report.staleWritesAccepted,
    twoAtWork: resource.twoAtWork,
    firstTwo: resource.firstTwo,
    late,
    fenceBackwards: report.fenceBackwards,
    fenceRepeats: report.fenceRepeats,
    overlaps: report.overlaps,
    firstOverlap: report.firstOverlap,
    staleProclaimsAccepted,
    observers: observers.map((w) => `${w.changes.length} (${w.changes.filter((c) => c.missed).length} missed)`),
    unavailable: report.unavailable,
    errors: report.errors,
    firstError: report.firstError,
    hung: report.hung,
    notes: run.notes,
    failures: [...run.failures],
  };
  row.failures.push(...leadersBroken(row), ...observersBroken(observers, grants, said, last));
  return row;
}

const percentile = (xs: number[], p: number) => {
  if (!xs.length) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};

function leadersBroken(r: ElectionRunRow): string[] {
  const out: string[] = [];
  if (r.writesRefused) out.push(`${r.writesRefused} writes refused at the resource: a leader wrote after a higher term had (two leaders)`);
  if (r.staleAccepted) out.push(`${r.staleAccepted} writes accepted below a term already granted (two leaders)`);
  if (r.twoAtWork) out.push(`${r.twoAtWork} times two leaders were at work at once (first: ${r.firstTwo})`);
  if (r.fenceBackwards || r.fenceRepeats) out.push(`terms went back ${r.fenceBackwards} times and repeated ${r.fenceRepeats} times in real time`);
  if (r.overlaps) out.push(`${r.overlaps} overlapping leases in store time (first: ${r.firstOverlap})`);
  if (r.staleProclaimsAccepted) out.push(`${r.staleProclaimsAccepted} proclaims of a resigned leader were accepted`);
  if (r.hung) out.push(`${r.hung} requests hung`);
  if (r.terms < 2) out.push(`${r.terms} terms: the leadership never passed on`);
  return out;
}

/** The observers' promises: each one's sequence in order and true, two of them agreeing, and all of them caught up. */
function observersBroken(observers: ElectionWatcher[], grants: Grant[], said: Set<string>, last: number): string[] {
  const out: string[] = [];
  const key = (c: ElectionChange) => `${c.term} ${c.value}`;
  for (const [n, w] of observers.entries()) {
    const o = `observer ${n + 1}`;
    if (w.failure) out.push(`${o} ended: ${w.failure}`);
    const back = w.changes.filter((c, i) => i > 0 && c.term < w.changes[i - 1].term);
    if (back.length) out.push(`${o}: a term went back ${back.length} times (first at position ${back[0].position})`);
    const unordered = w.changes.filter((c, i) => i > 0 && c.position <= w.changes[i - 1].position);
    if (unordered.length) out.push(`${o}: positions did not rise ${unordered.length} times`);
    const skipped = w.changes.filter((c, i) => !c.missed && c.position !== (i > 0 ? w.changes[i - 1].position + 1 : 1));
    if (skipped.length) out.push(`${o}: ${skipped.length} changes came after a gap without missed (first: position ${skipped[0].position})`);
    const unknown = w.changes.filter((c) => !said.has(c.value) && !said.has(key(c)));
    if (unknown.length) out.push(`${o}: told ${unknown.length} changes no campaigner made (first: term ${unknown[0].term}, "${unknown[0].value}")`);
    if (!w.changes.some((c) => c.missed)) {
      const terms = new Set(w.changes.map((c) => c.term));
      const untold = grants.filter((g) => !terms.has(g.term));
      if (untold.length) out.push(`${o}: never told ${untold.length} of the ${grants.length} terms granted (first: term ${untold[0].term})`);
    }
    const reached = w.changes.at(-1)?.position ?? 0;
    if (!(reached >= last)) out.push(`${o}: stopped at position ${reached}, the history's last is ${last}`);
    for (const [m, v] of observers.entries()) {
      if (m <= n) continue;
      const at = new Map(v.changes.map((c) => [c.position, key(c)]));
      const differ = w.changes.filter((c) => at.has(c.position) && at.get(c.position) !== key(c));
      if (differ.length)
        out.push(`observers ${n + 1} and ${m + 1} were told different changes at ${differ.length} positions (first: ${differ[0].position})`);
    }
  }
  return out;
}

const HEADER = [
  "store, client",
  "faults",
  "terms (resigns / lapses)",
  "handoff after a resign p50 / p99 ms",
  "proclaims",
  "writes ok / refused / accepted below a granted term",
  "two at work",
  "terms back / repeated; overlaps (store time)",
  "resigned leaders' proclaims accepted",
  "observers: changes told (missed)",
  "late work",
  "503s",
  "other errors",
  "hung",
  "promises",
];

function table(rows: ElectionRunRow[]): string {
  const line = (c: string[]) => `| ${c.join(" | ")} |`;
  const ms = (x: number) => (Number.isNaN(x) ? "-" : String(Math.round(x)));
  const cells = rows.map((r) => [
    r.target,
    `${r.faults.length} (${r.seconds.toFixed(1)} s)`,
    `${r.terms} (${r.resigns} / ${r.lapses})`,
    `${ms(r.handoffP50)} / ${ms(r.handoffP99)}`,
    String(r.proclaims),
    `${r.writesOk} / ${r.writesRefused} / ${r.staleAccepted}`,
    String(r.twoAtWork),
    `${r.fenceBackwards} / ${r.fenceRepeats}; ${r.overlaps}`,
    String(r.staleProclaimsAccepted),
    r.observers.join("; "),
    String(r.late),
    String(r.unavailable),
    String(r.errors),
    String(r.hung),
    r.failures.length ? "BROKEN" : "held",
  ]);
  return [line(HEADER), line(HEADER.map(() => "---")), ...cells.map(line)].join("\n");
}

/**
 * The runs: in full, each election store for 30 s under every flow-marked fault that applies to it;
 * quick, each flow.quick fault once, through the Worker where it applies there (the line, its
 * handoffs at once, and the observers' sockets are the service's), else on its quick target.
 */
function plan(quick: boolean): Array<{ target: TargetName; faults: Fault[] }> {
  const quickTarget = (f: Fault): TargetName =>
    f.quick.target === "Redis, library" && f.targets.includes("Redis, Worker") ? "Redis, Worker" : f.quick.target;
  if (quick)
    return FAULTS.filter((f) => f.flow?.quick && ELECTION_TARGETS.includes(quickTarget(f))).map((f) => ({ target: quickTarget(f), faults: [f] }));
  return ELECTION_TARGETS.map((target) => ({ target, faults: FAULTS.filter((f) => f.flow && f.targets.includes(target)) }));
}

export async function runElectionRows(lab: Lab, quick: boolean): Promise<{ runs: number; broken: number }> {
  console.log(`\n## ${ELECTION_ROW}${quick ? " (quick: one fault a run)" : ", 30 s on each store under its faults"}\n`);
  const rows: ElectionRunRow[] = [];
  for (const { target, faults } of plan(quick)) rows.push(await electionRun(lab, target, faults, quick ? QUICK : FULL, quick));
  return reportRows(ELECTION_ROW, "election", quick, rows, table);
}
