/**
 * The faults, each injected for real and healed after a bounded time, and
 * the targets (store and client) each applies to. `dataLoss` marks the faults
 * under which two holders are possible by design; every other fault must
 * show none.
 */
import type { Report } from "./checker";
import type { Lab, TargetName } from "./lab";
import { TTL_MS } from "./settings";

export interface FaultRun {
  lab: Lab;
  /** Set by the fault while it lasts: the workload's holders pause past their TTL. */
  pausing: boolean;
  /** Set by the fault while it lasts: waiters that hang up are running. */
  disconnecting: boolean;
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
    name: "Redis's clock moved 60 s back, with its data lost",
    targets: ["Redis, library"],
    dataLoss: true,
    lastsMs: 3000,
    inject: async ({ lab }) => {
      lab.nodes[0].shiftClock(-60_000);
      await lab.nodes[0].restartLosingData();
    },
    heal: async ({ lab }) => lab.nodes[0].shiftClock(0),
  },
  {
    name: "the gateway answers 502 for 2 s",
    targets: REDIS,
    dataLoss: false,
    lastsMs: 2000,
    inject: async ({ lab }) => void (lab.nodes[0].proxy.mode = { kind: "error", status: 502 }),
    heal: async ({ lab }) => void (lab.nodes[0].proxy.mode = { kind: "pass" }),
  },
  {
    name: "the gateway answers slowly (1.5 s, past the store deadline) for 3 s",
    targets: ["Redis, library"],
    dataLoss: false,
    lastsMs: 3000,
    inject: async ({ lab }) => void (lab.nodes[0].proxy.mode = { kind: "slow", delayMs: 1500 }),
    heal: async ({ lab }) => void (lab.nodes[0].proxy.mode = { kind: "pass" }),
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
      // Nothing may be left held on the database that stayed up: every partial grant was given back.
      const held = await run.lab.nodes[2].command("HGET", `hf:{mx:default:${lockName}}`, "owner");
      run.notes.push(`left held on the database that stayed up: ${held ? "yes" : "no"}`);
      if (held) run.failures.push("a lease was left held on the database that stayed up");
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
    inject: async (run) => void (run.pausing = true),
    heal: async (run) => void (run.pausing = false),
    verify: (r) => (r.writesRefused === 0 ? ["no stale write was refused: the pauses did not happen?"] : []),
  },
  {
    name: "waiters that hang up (3 loops, 50-300 ms each) for 4 s",
    targets: ["Redis, Worker", "Durable, Worker"],
    dataLoss: false,
    lastsMs: 4000,
    inject: async (run) => void (run.disconnecting = true),
    heal: async (run) => void (run.disconnecting = false),
  },
];
