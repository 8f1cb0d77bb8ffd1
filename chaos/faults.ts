/**
 * The faults, each injected for real and healed after a bounded time, and
 * the targets (store and client) each applies to. `dataLoss` marks the faults
 * under which two holders are possible by design; every other fault must
 * show none.
 */
import type { Report } from "./checker";
import { runStepBack, STEP_AFTER_MS, STEP_TTL_MS, type StepBackRun, stepBackVerdict } from "./clockStepBack";
import type { History } from "./history";
import type { Lab, TargetName } from "./lab";
import type { RedisNode } from "./redisNode";
import { TTL_MS } from "./settings";
import { now, sleep } from "./time";

export interface FaultRun {
  lab: Lab;
  /** Set by the fault while it lasts: the workload's holders pause past their TTL. */
  pausing: boolean;
  /** How long such a holder pauses (default 2.5 TTLs), and when the last one began to. */
  pauseMs?: number;
  pausedAt?: number;
  /** Set by the fault while it lasts: waiters that hang up are running. */
  disconnecting: boolean;
  /** Set by the fault while it lasts: socket waiters that go away (some after a grant they never acknowledge) are running. */
  socketsVanishing?: boolean;
  notes: string[];
  /** Failed promises beyond the common ones. */
  failures: string[];
  /** What the clients did in this run (for promises about every call). */
  history: History;
  /** Suite times from the fault taking effect to its healing beginning (a fault's heal may move `to`). */
  window: { from: number; to: number };
  /** The clock step-back rows' own scenario, on a lock of its own (clockStepBack.ts). */
  stepBack?: StepBackRun;
  /** The same writes judged at the in-memory resource, which no grant claims (set before verify). */
  unclaimed?: Report;
}

export interface Fault {
  name: string;
  targets: TargetName[];
  dataLoss: boolean;
  lastsMs: number;
  /** Its one run in the quick mode (QuickRun); every fault has one, so the quick mode runs every kind. */
  quick: QuickRun;
  inject(run: FaultRun, target: TargetName): Promise<void>;
  heal(run: FaultRun, target: TargetName, lockName: string): Promise<void>;
  /** Promises of this fault beyond the common ones; each failure is a sentence. */
  verify?(report: Report, run: FaultRun): string[];
  /**
   * The flow row (flowRow.ts) runs under it too, on the targets it shares with the flow's, one
   * fault after another in each store's 30 s; `quick`: the quick mode's flow run is this fault's,
   * on its quick target. Marked only where the fault keeps the store's data and clock (a flow's
   * promises stand on both: a window whose starts were lost admits more, a stepped clock moves the
   * window, docs/flow-limits.md) and needs nothing of the mutex workload (pausing holders, waiters
   * that hang up, its verify). The election row (electionRow.ts) runs under the same marks, for
   * the same reasons (with its data lost a store may give a term again and forget changes
   * observers were told; a stepped clock moves every leader's lease, docs/guarantees.md).
   */
  flow?: { quick?: boolean };
}

/**
 * A fault's one run in the quick mode (`npm run chaos:quick`, run by CI): on one of its
 * targets, and, where the fault still does what it is there for in less time, for `lastsMs`
 * instead of the full run's. Every fault runs (none is left out: with the quick windows of
 * settings.ts they take about 70 s together on two cores, the flood rows and the lab's start the
 * rest of about two minutes); the clock step-back scenarios take their own time whatever lastsMs.
 * The targets are spread so that each of the four (Redis store through the library and through
 * the Worker, the Durable store, the quorum) meets several kinds of fault:
 * - Redis, library: the restart with every write kept, the FLUSHALL, the clock forward and back,
 *   the slow gateway, the step back with a waiter in line;
 * - Redis, Worker: the SIGSTOP, the restart losing data, the step back with nobody calling, the
 *   clock back with a FLUSHALL, the 502s, the waiters that hang up;
 * - Durable, Worker: no fault, the Worker restart, holders pausing, socket waiters going away;
 * - quorum of 3, library: the clock back under a vanished holder, and its own three faults.
 */
interface QuickRun {
  target: TargetName;
  lastsMs?: number;
}

const ALL: TargetName[] = ["Redis, library", "Redis, Worker", "Durable, Worker", "quorum of 3, library"];
const REDIS: TargetName[] = ["Redis, library", "Redis, Worker"];
const nothing = async () => {};

/** A fault that did not take effect proves nothing: that is a broken promise of the suite's own. */
function confirm(run: FaultRun, happened: boolean, what: string): void {
  if (!happened) run.failures.push(`the fault did not take effect: ${what}`);
}

const answers = async (node: RedisNode) => (await node.command("PING").catch(() => undefined)) === "PONG";
const runId = async (node: RedisNode) => /run_id:(\w+)/.exec(String(await node.command("INFO", "server")))?.[1];

/** How far redis-server's clock (TIME) is from ours, in ms. */
async function clockOffset(node: RedisNode): Promise<number> {
  const [s, us] = (await node.command("TIME")) as unknown[];
  return Number(String(s)) * 1000 + Math.floor(Number(String(us)) / 1000) - Date.now();
}

async function shiftClock(run: FaultRun, node: RedisNode, ms: number): Promise<void> {
  node.shiftClock(ms);
  const offset = await clockOffset(node);
  confirm(run, Math.abs(offset - ms) < 2000, `Redis's clock is ${Math.round(offset)} ms from ours, not ${ms}`);
}

/** The databases a target's clock step moves: the quorum's three, else the one. */
const clockNodes = (run: FaultRun, target: TargetName) => (target === "quorum of 3, library" ? run.lab.nodes : [run.lab.nodes[0]]);

/**
 * The clock step-back rows: their scenario (clockStepBack.ts) runs on a lock of its own beside the
 * usual workload, and its verdict checks the bound docs/guarantees.md states (promise 6).
 */
function stepBackFault(what: string, waiter: boolean, quick: QuickRun): Fault {
  let scenario: Promise<StepBackRun | string> | undefined;
  return {
    name: `Redis's clock moved 30 s back, ${what} (a ${STEP_TTL_MS} ms lease, the step ${STEP_AFTER_MS} ms after its grant)`,
    targets: [...REDIS, "quorum of 3, library"],
    dataLoss: false,
    lastsMs: waiter ? 4500 : 6500,
    quick,
    inject: async (run, target) => {
      const name = `step-back-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
      const step = async () => {
        for (const node of clockNodes(run, target)) await shiftClock(run, node, -30_000);
      };
      scenario = runStepBack(run.lab.client(target), name, waiter, step).catch((err) => `the scenario failed: ${err}`);
    },
    // The clocks stay back until the next run starts, as in the fault above.
    heal: async (run) => {
      const done = (await scenario) ?? "the scenario never started";
      if (typeof done === "string") run.failures.push(done);
      else {
        run.stepBack = done;
        run.notes.push(...stepBackVerdict(done).notes);
      }
    },
    verify: (_r, run) => (run.stepBack ? stepBackVerdict(run.stepBack).failures : ["the step-back scenario did not run"]),
  };
}

/** A kill, confirmed down; the start that heals it, confirmed a new process. */
function killAndStart(index: number, start: (node: RedisNode) => Promise<void>) {
  let before: string | undefined;
  return {
    inject: async (run: FaultRun) => {
      const node = run.lab.nodes[index];
      before = await runId(node);
      await node.kill();
      confirm(run, !(await answers(node)), `redis-server ${index} still answers after SIGKILL`);
    },
    heal: async (run: FaultRun) => {
      const node = run.lab.nodes[index];
      await start(node);
      confirm(run, (await runId(node)) !== before, `redis-server ${index} is the same process after the restart`);
    },
  };
}

export const FAULTS: Fault[] = [
  {
    name: "no fault",
    targets: ALL,
    dataLoss: false,
    lastsMs: 2000,
    flow: {},
    // The quick run's windows before and after are a run without a fault already.
    quick: { target: "Durable, Worker", lastsMs: 0 },
    inject: nothing,
    heal: nothing,
  },
  {
    name: `redis-server paused (SIGSTOP) for ${2.5 * TTL_MS} ms, past the TTL`,
    targets: [...REDIS, "quorum of 3, library"],
    dataLoss: false,
    lastsMs: 2.5 * TTL_MS,
    flow: {},
    // Past the TTL is the point: not shortened.
    quick: { target: "Redis, Worker" },
    inject: async (run) => {
      run.lab.nodes[0].pause();
      confirm(run, !(await answers(run.lab.nodes[0])), "redis-server still answers after SIGSTOP");
    },
    heal: async ({ lab }) => lab.nodes[0].resume(),
  },
  {
    name: "redis-server restarted (killed; every write was fsynced)",
    targets: REDIS,
    dataLoss: false,
    lastsMs: 500,
    flow: { quick: true },
    quick: { target: "Redis, library" },
    ...killAndStart(0, (node) => node.start()),
  },
  {
    name: "redis-server restarted after losing its data",
    targets: REDIS,
    dataLoss: true,
    lastsMs: 500,
    quick: { target: "Redis, Worker" },
    ...killAndStart(0, (node) => node.restartLosingData()),
  },
  {
    name: "FLUSHALL on redis-server (its data lost, no restart)",
    targets: REDIS,
    dataLoss: true,
    lastsMs: 0,
    quick: { target: "Redis, library" },
    inject: async (run) => confirm(run, (await run.lab.nodes[0].command("FLUSHALL")) === "OK", "FLUSHALL was not answered OK"),
    heal: nothing,
  },
  {
    name: "Redis's clock moved 30 s forward",
    targets: ["Redis, library"],
    dataLoss: false,
    lastsMs: 3000,
    // A TTL with the clock forward: every lease taken in it ends early, and the next holders' grants come in it.
    quick: { target: "Redis, library", lastsMs: TTL_MS },
    inject: async (run) => shiftClock(run, run.lab.nodes[0], 30_000),
    heal: async ({ lab }) => lab.nodes[0].shiftClock(0),
  },
  {
    name: "Redis's clock moved 30 s back",
    targets: ["Redis, library"],
    dataLoss: false,
    lastsMs: 3000,
    // A TTL with the clock back (it stays back through the window after, too).
    quick: { target: "Redis, library", lastsMs: TTL_MS },
    inject: async (run) => shiftClock(run, run.lab.nodes[0], -30_000),
    heal: async ({ lab }) => lab.nodes[0].shiftClock(0),
  },
  {
    // A lease written before the step would otherwise last the step longer: here the
    // whole fault, since its holder never comes back to release it while it lasts.
    name: "Redis's clock moved 30 s back while the holder had vanished (holding, silent)",
    targets: [...REDIS, "quorum of 3, library"],
    dataLoss: false,
    lastsMs: 5000,
    // The fault and the window after it still outlast the bound verify checks (3 TTLs), so a lease
    // that stood still by the clock's step still shows as a gap past it.
    quick: { target: "quorum of 3, library", lastsMs: 3 * TTL_MS },
    inject: async (run, target) => {
      run.pauseMs = 9000;
      run.pausing = true;
      const deadline = now() + 5000;
      while (run.pausedAt === undefined && now() < deadline) await sleep(5);
      run.pausing = false;
      confirm(run, run.pausedAt !== undefined, "no holder vanished");
      for (const node of clockNodes(run, target)) await shiftClock(run, node, -30_000);
    },
    // The clocks stay back until the next run starts (the lab's heal): moving them forward
    // again while clients hold would be the other fault, a clock that jumps forward.
    heal: nothing,
    verify: (r) =>
      // The vanished holder's lease, moved onto the stepped clock, ends within its TTL of the step being seen.
      r.longestGapMs > 3 * TTL_MS ? [`the lock stood still ${Math.round(r.longestGapMs)} ms: a lease outlived its TTL by the clock's step`] : [],
  },
  // The scenario takes as long as it takes (heal waits for it, the clocks stay back meanwhile):
  // the workload beside it needs only a TTL of the fault before its window after.
  stepBackFault("nobody calls after the step", false, { target: "Redis, Worker", lastsMs: TTL_MS }),
  stepBackFault("a waiter queued before the step", true, { target: "Redis, library", lastsMs: TTL_MS }),
  {
    name: "Redis's clock moved 60 s back together with a FLUSHALL",
    targets: REDIS,
    dataLoss: true,
    lastsMs: 3000,
    quick: { target: "Redis, Worker", lastsMs: TTL_MS },
    inject: async (run) => {
      await shiftClock(run, run.lab.nodes[0], -60_000);
      confirm(run, (await run.lab.nodes[0].command("FLUSHALL")) === "OK", "FLUSHALL was not answered OK");
    },
    heal: async ({ lab }) => lab.nodes[0].shiftClock(0),
  },
  {
    name: "the gateway answers 502 for 2 s",
    targets: REDIS,
    dataLoss: false,
    lastsMs: 2000,
    flow: {},
    // A TTL of 502s: leases run out while their heartbeats and releases fail.
    quick: { target: "Redis, Worker", lastsMs: TTL_MS },
    inject: async ({ lab }) => {
      lab.nodes[0].proxy.counts.error = 0;
      lab.nodes[0].proxy.mode = { kind: "error", status: 502 };
    },
    heal: async (run) => {
      run.lab.nodes[0].proxy.mode = { kind: "pass" };
      confirm(run, run.lab.nodes[0].proxy.counts.error > 0, "no request was answered 502");
    },
  },
  {
    name: "the gateway answers slowly (1.5 s, past the store deadline) for 3 s",
    targets: ["Redis, library"],
    dataLoss: false,
    lastsMs: 3000,
    flow: {},
    // Room for a slow answer (1.5 s) to come back inside the fault.
    quick: { target: "Redis, library", lastsMs: 2000 },
    inject: async ({ lab }) => {
      lab.nodes[0].proxy.counts.slow = 0;
      lab.nodes[0].proxy.mode = { kind: "slow", delayMs: 1500 };
    },
    heal: async (run) => {
      run.lab.nodes[0].proxy.mode = { kind: "pass" };
      confirm(run, run.lab.nodes[0].proxy.counts.slow > 0, "no request was answered slowly");
    },
  },
  {
    name: "quorum: one of three databases down for 4 s",
    targets: ["quorum of 3, library"],
    dataLoss: false,
    lastsMs: 4000,
    // A TTL: leases taken, heartbeated and ended (holds of 200 ms) with one database down.
    quick: { target: "quorum of 3, library", lastsMs: TTL_MS },
    ...killAndStart(1, (node) => node.start()),
    verify: (r) => (r.unavailable > 0 ? [`${r.unavailable} calls answered 503 with only one database down`] : []),
  },
  {
    name: "quorum: two of three databases down for 4 s",
    targets: ["quorum of 3, library"],
    dataLoss: false,
    lastsMs: 4000,
    // Calls go on through it (each a 503 within its bound); heal waits a TTL more anyway.
    quick: { target: "quorum of 3, library", lastsMs: TTL_MS },
    inject: async (run) => {
      await run.lab.nodes[0].kill();
      await run.lab.nodes[1].kill();
      confirm(run, !(await answers(run.lab.nodes[0])) && !(await answers(run.lab.nodes[1])), "a killed database still answers");
    },
    heal: async (run, _target, lockName) => {
      // Nothing may be left held on the database that stayed up: a partial grant is given back at
      // once. (Clients still try meanwhile, so a grant may be there for a moment: the same lease
      // must not be there a TTL later.)
      const key = `hf:{mx:default:${lockName}}`;
      // The lease's owner while it is held: the mutex's hash keeps a lapsed lease's fields until the next grant,
      // so a lease is held while its end (exp) is ahead of that database's clock.
      const holder = async () => {
        const [owner, exp] = (await run.lab.nodes[2].command("HMGET", key, "owner", "exp")) as Array<string | null>;
        const [seconds, micros] = (await run.lab.nodes[2].command("TIME")) as string[];
        return owner !== null && Number(exp) > Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) ? String(owner) : null;
      };
      const before = await holder();
      await sleep(TTL_MS + 200);
      const after = await holder();
      const left = before !== null && before === after;
      run.notes.push(`a lease left held on the database that stayed up (the same one a TTL later): ${left ? "yes" : "no"}`);
      if (left) run.failures.push("a lease was left held on the database that stayed up");
      run.window.to = now();
      await run.lab.nodes[0].start();
      await run.lab.nodes[1].start();
    },
    verify: (r, run) => {
      const out: string[] = [];
      // Every call made while two were down, not just some, is a 503.
      const during = run.history.ops.filter((o) => o.invokedAt >= run.window.from && o.completedAt <= run.window.to);
      const answered = during.filter((o) => o.outcome.kind !== "unavailable");
      if (during.length === 0) out.push("no call was made with two of three databases down");
      if (answered.length)
        out.push(
          `${answered.length} of ${during.length} calls with two of three databases down were not 503 (first: ${answered[0].op} ${answered[0].outcome.kind})`,
        );
      // Two rounds of the per-database bound (STORE_TIMEOUT_MS / 2 each), and room for a busy machine.
      if (r.unavailableP99Ms > 2000) out.push(`503s took up to ${Math.round(r.unavailableP99Ms)} ms (p99), past the 2 s bound`);
      return out;
    },
  },
  {
    name: "quorum: one database down, then another loses its data (FLUSHALL) and the first comes back",
    targets: ["quorum of 3, library"],
    dataLoss: true,
    lastsMs: 0,
    quick: { target: "quorum of 3, library" },
    inject: async (run) => {
      // Leases granted now stand on databases 0 and 1 only; wiping 1 and bringing 2 back
      // (without those leases) lets a second majority form while a holder still works.
      const { lab, history } = run;
      const before = await runId(lab.nodes[2]);
      await lab.nodes[2].kill();
      confirm(run, !(await answers(lab.nodes[2])), "redis-server 2 still answers after SIGKILL");
      const downAt = now();
      await sleep(1500);
      const onTwo = history.ops.filter((o) => o.outcome.kind === "granted" && o.invokedAt >= downAt).length;
      confirm(run, onTwo > 0, "no lease was granted while database 2 was down: none stood on databases 0 and 1 only");
      const keys = Number(await lab.nodes[1].command("DBSIZE"));
      confirm(
        run,
        keys > 0 && (await lab.nodes[1].command("FLUSHALL")) === "OK",
        `database 1 had ${keys} keys to lose, or FLUSHALL was not answered OK`,
      );
      await lab.nodes[2].start();
      confirm(run, (await runId(lab.nodes[2])) !== before, "redis-server 2 is the same process after the restart");
      run.notes.push(`${onTwo} leases granted on databases 0 and 1 alone before database 1 lost its ${keys} keys`);
    },
    heal: nothing,
  },
  {
    name: "the Worker restarted (workerd killed, Durable Object storage kept)",
    targets: ["Redis, Worker", "Durable, Worker"],
    dataLoss: false,
    lastsMs: 0,
    flow: { quick: true },
    quick: { target: "Durable, Worker" },
    inject: async (run, target) => {
      // A wait held open in the old process must be cut by the restart, and a lease taken before
      // it must still be there after (released with its token): a restart that happened, storage kept.
      const client = run.lab.client(target);
      const name = `restart-probe-${Date.now().toString(36)}`;
      const held = await client.acquire(name, 30_000, 0);
      const waiting = client.acquire(name, 30_000, 8000);
      const deadline = now() + 3000;
      let inLine = false;
      while (!inLine && now() < deadline) {
        inLine = ((await client.waiters?.(name)) ?? 0) > 0;
        if (!inLine) await sleep(10);
      }
      confirm(run, held.kind === "granted" && inLine, `no lease and waiter to probe the restart with (${held.kind}, waiting: ${inLine})`);
      await (target === "Redis, Worker" ? run.lab.workers.redis : run.lab.workers.durable).restart();
      const cut = await waiting;
      confirm(run, cut.kind === "error", `a wait open in the old process was not cut by the restart (it answered ${cut.kind})`);
      const released = held.kind === "granted" ? await client.release(name, held.token) : undefined;
      confirm(run, released?.kind === "ok", `the lease taken before the restart was not there after it (release: ${released?.kind})`);
    },
    heal: nothing,
  },
  {
    name: `holders pausing ${2.5 * TTL_MS} ms (past the TTL) while holding, for 4 s`,
    targets: ["Redis, library", "Durable, Worker", "quorum of 3, library"],
    dataLoss: false,
    lastsMs: 4000,
    // Long enough for a holder to begin its pause (one at a time; holds of 200 ms), which wakes as
    // the next grant comes back, in the window after at the latest.
    quick: { target: "Durable, Worker", lastsMs: TTL_MS },
    inject: async (run) => {
      run.pausing = true;
    },
    heal: async (run) => {
      run.pausing = false;
    },
    // A paused holder wakes as the next grant comes back: without claim on grant its write is
    // taken (the in-memory resource); the real resources, claimed on grant, must refuse it.
    verify: (r, run) => [
      ...(r.writesRefused === 0 ? ["no stale write was refused: the pauses did not happen?"] : []),
      ...(run.unclaimed?.staleWritesAccepted
        ? []
        : ["no late write came before the next holder's first (the in-memory resource took none): the gap claim on grant closes was not tried"]),
    ],
  },
  {
    name: "waiters that hang up (3 loops, 50-300 ms each) for 4 s",
    targets: ["Redis, Worker", "Durable, Worker"],
    dataLoss: false,
    lastsMs: 4000,
    // Several hang-ups per loop in a TTL.
    quick: { target: "Redis, Worker", lastsMs: TTL_MS },
    inject: async (run) => {
      run.disconnecting = true;
    },
    heal: async (run) => {
      run.disconnecting = false;
    },
    verify: (_r, run) => (run.notes.some((n) => /^[1-9]\d* waiters hung up/.test(n)) ? [] : ["no waiter hung up: the fault did not happen"]),
  },
  {
    name: "socket waiters that go away (3 loops, 50-300 ms each, grants never acknowledged) for 4 s",
    targets: ["Redis, Worker", "Durable, Worker"],
    dataLoss: false,
    lastsMs: 4000,
    // Several sockets per loop in a TTL.
    quick: { target: "Durable, Worker", lastsMs: TTL_MS },
    inject: async (run) => {
      run.socketsVanishing = true;
    },
    heal: async (run) => {
      run.socketsVanishing = false;
    },
  },
];
