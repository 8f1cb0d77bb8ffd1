/**
 * The uncontended cycle over its floor (issue 38): acquire (try once) +
 * release through the holdfast Worker, against the same two requests to a
 * bare Worker that does only the store's round trip (bench/cycleFloorWorker,
 * no holdfast code): on the Durable store two Worker -> Durable Object calls
 * that write storage once each, on the Redis store two Worker -> gateway
 * calls of a key-locked script. Both are served by tools/serve-worker and
 * driven by the same client (WorkerApi) in alternating rounds, so a machine
 * that slows down mid-run slows both. Read per store: wall time per cycle
 * (p50 of every cycle of every round) and workerd's CPU time per request
 * (utime + stime of the process serving it, from /proc, over every round).
 * The target: both within CYCLE_FLOOR_TARGET x the floor.
 */
import fs from "node:fs";
import path from "node:path";
import { startWorkerServer } from "../tools/serve-worker/serve.mjs";
import { recordFigure } from "./baseline";
import { WorkerApi } from "./clients";
import { withTimeout } from "./loop";
import { pidListeningOn } from "./processFiles";
import { type Gateway, ROOT } from "./stack";
import { ms, percentile, ratio } from "./stats";
import { printTable } from "./table";

export const CYCLE_FLOOR_TARGET = 1.25;

/**
 * CPU seconds a process has used: the time on a CPU of each of its threads
 * (/proc/<pid>/task/<tid>/schedstat, in ns), else utime + stime from
 * /proc/<pid>/stat (in 10 ms ticks: coarse for a round of a few hundred ms).
 */
export function cpuSeconds(pid: number): number {
  if (fs.existsSync(`/proc/${pid}/schedstat`)) {
    let ns = 0;
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // a thread gone between the listing and the read (workerd's own threads live as long as it does)
      }
    }
    return ns / 1e9;
  }
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks, USER_HZ 100
}

/** A Worker that serves the cycle, and the workerd process whose CPU it spends. */
export interface CycleServer {
  api: WorkerApi;
  pid: number;
}

/** The floor Worker (bench/cycleFloorWorker), its two bases, and how to stop it. */
export interface CycleFloorServer {
  durable: CycleServer;
  redis: CycleServer;
  stop(): Promise<void>;
}

/** The workerd listening at a base URL (http://127.0.0.1:<port>). */
export function workerdPid(base: string): number {
  const pid = pidListeningOn(Number(new URL(base).port));
  if (!pid) throw new Error(`no process listens at ${base}`);
  return pid;
}

export async function startCycleFloor(gw: Gateway): Promise<CycleFloorServer> {
  const server = await withTimeout(
    startWorkerServer({ vars: { GATEWAY_URL: gw.url, GATEWAY_TOKEN: gw.token }, projectDir: path.join(ROOT, "bench/cycleFloorWorker") }),
    120_000,
    "serving the cycle floor Worker",
  );
  try {
    const pid = workerdPid(server.url);
    const floor = (store: string) => ({ api: new WorkerApi(`${server.url}/${store}`, "the-floor-has-no-keys"), pid });
    return { durable: floor("do"), redis: floor("redis"), stop: server.stop };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

export interface CycleFloorRow {
  store: "Redis" | "Durable";
  /** Per cycle, ms: every cycle of every round. */
  worker: number[];
  floor: number[];
  /** workerd CPU per request, µs. */
  workerCpuUs: number;
  floorCpuUs: number;
  cycles: number;
  note?: string;
}

/** One round: `cycles` sequential cycles on one name; their durations and the CPU workerd spent. */
async function round(server: CycleServer, name: string, cycles: number): Promise<{ durations: number[]; cpu: number }> {
  const durations: number[] = [];
  const cpu0 = cpuSeconds(server.pid);
  for (let i = 0; i < cycles; i++) {
    const t0 = performance.now();
    const release = await server.api.acquire(name);
    if (!release) throw new Error(`${server.api.base}: an uncontended acquire of ${name} was refused`);
    await release();
    durations.push(performance.now() - t0);
  }
  return { durations, cpu: cpuSeconds(server.pid) - cpu0 };
}

/**
 * The holdfast Worker and its floor on one store, `rounds` rounds of
 * `cycles` each, taking turns (each goes first in every other round).
 */
export async function measureCycleOverFloor(
  store: CycleFloorRow["store"],
  worker: CycleServer,
  floor: CycleServer,
  opts: { rounds: number; cycles: number; prefix: string },
): Promise<CycleFloorRow> {
  const sides = { worker: { server: worker, durations: [] as number[], cpu: 0 }, floor: { server: floor, durations: [] as number[], cpu: 0 } };
  // Warm-up: connections, isolates, the script caches, the objects and the JIT.
  for (const side of Object.values(sides)) await round(side.server, `${opts.prefix}-warm`, 100);
  for (let r = 0; r < opts.rounds; r++) {
    const order = r % 2 === 0 ? [sides.worker, sides.floor] : [sides.floor, sides.worker];
    for (const side of order) {
      const m = await round(side.server, `${opts.prefix}-${r % 2}`, opts.cycles);
      side.durations.push(...m.durations);
      side.cpu += m.cpu;
    }
  }
  const requests = opts.rounds * opts.cycles * 2;
  return {
    store,
    worker: sides.worker.durations,
    floor: sides.floor.durations,
    workerCpuUs: (sides.worker.cpu * 1e6) / requests,
    floorCpuUs: (sides.floor.cpu * 1e6) / requests,
    cycles: opts.rounds * opts.cycles,
  };
}

/** A row's two ratios: the Worker's p50 and CPU per request over the floor's. */
export function overFloor(r: CycleFloorRow): { wall: number; cpu: number } {
  return { wall: percentile(r.worker, 50) / percentile(r.floor, 50), cpu: r.workerCpuUs / r.floorCpuUs };
}

export const CYCLE_FLOOR_HEADER = ["store", "Worker p50 ms", "floor p50 ms", "x floor", "Worker CPU µs/req", "floor CPU µs/req", "x floor"];

export function cycleFloorTableRows(rows: CycleFloorRow[]): string[][] {
  return rows.map((r) => {
    const x = overFloor(r);
    return [
      r.store,
      ms(percentile(r.worker, 50)),
      ms(percentile(r.floor, 50)),
      `${ratio(x.wall)}x`,
      r.workerCpuUs.toFixed(0),
      r.floorCpuUs.toFixed(0),
      `${ratio(x.cpu)}x`,
    ];
  });
}

export function cycleFloorNotes(rows: CycleFloorRow[], rounds: number, cycles: number): string[] {
  return [
    `acquire (try once, ttl 10 s) + release, one at a time on one name, by the same client (bench/clients.ts WorkerApi); ${rounds} rounds`,
    `of ${cycles} cycles each, the holdfast Worker and its floor taking turns. floor: bench/cycleFloorWorker (no holdfast code), served the`,
    "same way: Durable = two Worker -> Durable Object RPCs that write storage once each; Redis = two Worker -> gateway EVALSHAs of a",
    "key-locked script (the same flag line, 4 and 6 KEYS of one hash slot, the gateway checking the key rule). CPU = time on a CPU of the",
    "workerd serving it (/proc schedstat of its threads) over all rounds / requests (2 per cycle); the gateway and redis-server are not in it.",
    `target: <= ${CYCLE_FLOOR_TARGET}x in both (issue 38); no rate-limit or METRICS binding is bound here, so neither costs a call.`,
    ...rows.filter((r) => r.note).map((r) => `${r.store}: ${r.note}`),
  ];
}

/**
 * Table 1c, for `npm run bench` (section 1, or alone: BENCH_ONLY=1c): starts
 * the floor Worker, measures each store against it, prints the table and
 * records the ratios for the baseline comparison; stops the floor Worker.
 */
export async function cycleFloorSection(gw: Gateway, workers: { redis: WorkerApi; durable: WorkerApi }, run: string, quick: boolean): Promise<void> {
  // Short rounds, many of them: a machine whose load moves during the run moves both sides alike.
  const rounds = quick ? 8 : 30;
  const cycles = 50;
  const floor = await startCycleFloor(gw);
  const rows: CycleFloorRow[] = [];
  try {
    for (const [store, api, floorServer] of [
      ["Durable", workers.durable, floor.durable],
      ["Redis", workers.redis, floor.redis],
    ] as const) {
      rows.push(
        await measureCycleOverFloor(store, { api, pid: workerdPid(api.base) }, floorServer, { rounds, cycles, prefix: `${run}-f${rows.length}` }),
      );
    }
  } finally {
    await floor.stop();
  }
  for (const r of rows) {
    const x = overFloor(r);
    recordFigure({ name: `1c. ${r.store} store Worker cycle p50 / floor`, value: x.wall, unit: "x", better: "lower", noise: 0.2 });
    recordFigure({ name: `1c. ${r.store} store workerd CPU per request / floor`, value: x.cpu, unit: "x", better: "lower", noise: 0.15 });
  }
  printTable(
    "1c. The uncontended cycle over its floor (same run, alternating rounds)",
    CYCLE_FLOOR_HEADER,
    cycleFloorTableRows(rows),
    cycleFloorNotes(rows, rounds, cycles),
  );
}
