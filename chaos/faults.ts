/**
 * The faults, each injected for real and healed after a bounded time, and
 * the targets (store and client) each applies to. `dataLoss` marks the faults
 * under which two holders are possible by design; every other fault must
 * show none.
 */
import type { Report } from "./checker";
import type { Lab, TargetName } from "./lab";
import { TTL_MS } from "./settings";
import { sleep } from "./time";

export interface FaultRun {
  lab: Lab;
  /** Set by the fault while it lasts: the workload's holders pause past their TTL. */
  pausing: boolean;
  /** Set by the fault while it lasts: waiters that hang up are running. */
  disconnecting: boolean;
  /** Set by the fault while it lasts: socket waiters that go away (some after a grant they never acknowledge) are running. */
  socketsVanishing?: boolean;
  notes: string[];
  /** Failed promises beyond the common ones. */
  failures: string[];
}

export interface Fault {
  name: string;
  targets: TargetName[];
  dataLoss: boolean;
  lastsMs: number;
  inject(run: FaultRun, target: TargetName): Promise<void>;
  heal(run: FaultRun, target: TargetName, lockName: string): Promise<void>;
  /** Promises of this fault beyond the common ones; each failure is a sentence. */
  verify?(report: Report, run: FaultRun): string[];
}

const ALL: TargetName[] = ["Redis, library", "Redis, Worker", "Durable, Worker", "quorum of 3, library"];
const REDIS: TargetName[] = ["Redis, library", "Redis, Worker"];
const nothing = async () => {};

export const FAULTS: Fault[] = [
  { name: "no fault", targets: ALL, dataLoss: false, lastsMs: 2000, inject: nothing, heal: nothing },
  {
    name: `redis-server paused (SIGSTOP) for ${2.5 * TTL_MS} ms, past the TTL`,
    targets: [...REDIS, "quorum of 3, library"],
    dataLoss: false,
    lastsMs: 2.5 * TTL_MS,
    inject: async ({ lab }) => lab.nodes[0].pause(),
    heal: async ({ lab }) => lab.nodes[0].resume(),
  },
  {
    name: "redis-server restarted (killed; every write was fsynced)",
    targets: REDIS,
    dataLoss: false,
    lastsMs: 500,
    inject: async ({ lab }) => lab.nodes[0].kill(),
    heal: async ({ lab }) => lab.nodes[0].start(),
  },
  {
    name: "redis-server restarted after losing its data",
    targets: REDIS,
    dataLoss: true,
    lastsMs: 500,
    inject: async ({ lab }) => lab.nodes[0].kill(),
    heal: async ({ lab }) => lab.nodes[0].restartLosingData(),
  },
  {
    name: "FLUSHALL on redis-server (its data lost, no restart)",
    targets: REDIS,
    dataLoss: true,
    lastsMs: 0,
    inject: async ({ lab }) => void (await lab.nodes[0].command("FLUSHALL")),
    heal: nothing,
  },
  {
    name: "Redis's clock moved 30 s forward",
    targets: ["Redis, library"],
    dataLoss: false,
    lastsMs: 3000,
    inject: async ({ lab }) => lab.nodes[0].shiftClock(30_000),
    heal: async ({ lab }) => lab.nodes[0].shiftClock(0),
  },
  {
    name: "Redis's clock moved 30 s back",
    targets: ["Redis, library"],
    dataLoss: false,
    lastsMs: 3000,
    inject: async ({ lab }) => lab.nodes[0].shiftClock(-30_000),
    heal: async ({ lab }) => lab.nodes[0].shiftClock(0),
  },
  {
    name: "Redis's clock moved 60 s back together with a FLUSHALL",
    targets: REDIS,
    dataLoss: true,
    lastsMs: 3000,
    inject: async ({ lab }) => {
      lab.nodes[0].shiftClock(-60_000);
      await lab.nodes[0].command("FLUSHALL");
    },
    heal: async ({ lab }) => lab.nodes[0].shiftClock(0),
  },
  {
    name: "the gateway answers 502 for 2 s",
    targets: REDIS,
    dataLoss: false,
    lastsMs: 2000,
    inject: async ({ lab }) => {
      lab.nodes[0].proxy.mode = { kind: "error", status: 502 };
    },
    heal: async ({ lab }) => {
      lab.nodes[0].proxy.mode = { kind: "pass" };
    },
  },
  {
    name: "the gateway answers slowly (1.5 s, past the store deadline) for 3 s",
    targets: ["Redis, library"],
    dataLoss: false,
    lastsMs: 3000,
    inject: async ({ lab }) => {
      lab.nodes[0].proxy.mode = { kind: "slow", delayMs: 1500 };
    },
    heal: async ({ lab }) => {
      lab.nodes[0].proxy.mode = { kind: "pass" };
    },
  },
  {
    name: "quorum: one of three databases down for 4 s",
    targets: ["quorum of 3, library"],
    dataLoss: false,
    lastsMs: 4000,
    inject: async ({ lab }) => lab.nodes[1].kill(),
    heal: async ({ lab }) => lab.nodes[1].start(),
    verify: (r) => (r.unavailable > 0 ? [`${r.unavailable} calls answered 503 with only one database down`] : []),
  },
  {
    name: "quorum: two of three databases down for 4 s",
    targets: ["quorum of 3, library"],
    dataLoss: false,
    lastsMs: 4000,
    inject: async ({ lab }) => {
      await lab.nodes[0].kill();
      await lab.nodes[1].kill();
    },
    heal: async (run, _target, lockName) => {
      // Nothing may be left held on the database that stayed up: a partial grant is given back at
      // once. (Clients still try meanwhile, so a grant may be there for a moment: the same lease
      // must not be there a TTL later.)
      const key = `hf:{mx:default:${lockName}}`;
      const before = await run.lab.nodes[2].command("HGET", key, "owner");
      await sleep(TTL_MS + 200);
      const after = await run.lab.nodes[2].command("HGET", key, "owner");
      const left = before !== null && String(before) === String(after);
      run.notes.push(`a lease left held on the database that stayed up (the same one a TTL later): ${left ? "yes" : "no"}`);
      if (left) run.failures.push("a lease was left held on the database that stayed up");
      await run.lab.nodes[0].start();
      await run.lab.nodes[1].start();
    },
    verify: (r) => {
      const out: string[] = [];
      if (r.unavailable === 0) out.push("no 503 with two of three databases down");
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
    inject: async ({ lab }) => {
      // Leases granted now stand on databases 0 and 1 only; wiping 1 and bringing 2 back
      // (without those leases) lets a second majority form while a holder still works.
      await lab.nodes[2].kill();
      await sleep(1500);
      await lab.nodes[1].command("FLUSHALL");
      await lab.nodes[2].start();
    },
    heal: nothing,
  },
  {
    name: "the Worker restarted (workerd killed, Durable Object storage kept)",
    targets: ["Redis, Worker", "Durable, Worker"],
    dataLoss: false,
    lastsMs: 0,
    inject: async ({ lab }, target) => (target === "Redis, Worker" ? lab.workers.redis : lab.workers.durable).restart(),
    heal: nothing,
  },
  {
    name: `holders pausing ${2.5 * TTL_MS} ms (past the TTL) while holding, for 4 s`,
    targets: ["Redis, library", "Durable, Worker", "quorum of 3, library"],
    dataLoss: false,
    lastsMs: 4000,
    inject: async (run) => {
      run.pausing = true;
    },
    heal: async (run) => {
      run.pausing = false;
    },
    verify: (r) => (r.writesRefused === 0 ? ["no stale write was refused: the pauses did not happen?"] : []),
  },
  {
    name: "waiters that hang up (3 loops, 50-300 ms each) for 4 s",
    targets: ["Redis, Worker", "Durable, Worker"],
    dataLoss: false,
    lastsMs: 4000,
    inject: async (run) => {
      run.disconnecting = true;
    },
    heal: async (run) => {
      run.disconnecting = false;
    },
  },
  {
    name: "socket waiters that go away (3 loops, 50-300 ms each, grants never acknowledged) for 4 s",
    targets: ["Redis, Worker", "Durable, Worker"],
    dataLoss: false,
    lastsMs: 4000,
    inject: async (run) => {
      run.socketsVanishing = true;
    },
    heal: async (run) => {
      run.socketsVanishing = false;
    },
  },
];
