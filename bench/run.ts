/**
 * `npm run bench`: figures for holdfast next to @upstash/lock on one local
 * stack. A benchmark, not a test: it prints tables and asserts nothing.
 * Bounded in time (every loop by count and time, a 4-minute watchdog), and
 * every process it starts is stopped at the end, also on error or Ctrl-C.
 */
import os from "node:os";
import { measureCeiling, CEILING_CLIENTS, CEILING_REQUESTS } from "./ceiling";
import { upstashRedis, WorkerApi } from "./clients";
import { CLIENTS, CONTENDED_HEADER, contendedTableRows, contendedTargets, measureContended, type ContendedRow } from "./contended";
import { measureFloors } from "./floor";
import { HANDOFF_HEADER, handoffTableRows, handoffTargets, HOLD_MAX_MS, HOLD_MIN_MS, measureHandoff, type HandoffRow } from "./handoff";
import { redisVersion } from "./redisInfo";
import { installFetchCounter } from "./roundTrips";
import { type BenchStack, startBenchStack, wranglerVersion } from "./stack";
import { int, ms } from "./stats";
import { printTable } from "./table";
import { CYCLE_HEADER, cycleTableRows, cycleTargets, measureCycles, type CycleRow } from "./uncontended";

const UNCONTENDED_MS = 2000;
const PARALLEL_LOOPS = 16;
const HANDOFFS = 100;
const HANDOFF_MAX_MS = 20_000;
const CONTENDED_MS = 3000;
const WATCHDOG_MS = 240_000;

let stack: BenchStack | undefined;

async function main(): Promise<void> {
  const startedAt = Date.now();
  installFetchCounter();
  const watchdog = setTimeout(() => {
    console.error(`\nbench: still running after ${WATCHDOG_MS / 1000} s; stopping everything`);
    void shutdown(2);
  }, WATCHDOG_MS);
  watchdog.unref();
  for (const sig of ["SIGINT", "SIGTERM"] as const)
    process.once(sig, () => {
      console.error(`\nbench: ${sig}, stopping`);
      void shutdown(130);
    });
  // Once stopping, requests in flight fail as their servers go away: not worth a crash.
  process.on("unhandledRejection", (err) => {
    if (!stopping) console.error(`bench: unhandled rejection: ${err instanceof Error ? err.message : String(err)}`);
    void shutdown(1);
  });

  const load0 = os.loadavg()[0];
  stack = await startBenchStack();
  const { gateway: gw } = stack;
  const redis = upstashRedis(gw);
  const workers = { redis: new WorkerApi(stack.workers.redis, stack.apiKey), durable: new WorkerApi(stack.workers.durable, stack.apiKey) };
  const run = `b${Date.now().toString(36)}`;

  const cpu = os.cpus()[0]?.model.trim() ?? "?";
  const command = process.env.npm_lifecycle_event === "bench" ? `npm run bench   (${process.env.npm_lifecycle_script})` : `tsx bench/run.ts`;
  console.log(`holdfast bench, ${new Date().toISOString()}`);
  console.log(`command : ${command}`);
  console.log(`machine : ${os.cpus().length} cores (${cpu}), ${os.platform()} ${os.arch()}, load avg ${load0.toFixed(2)} at start`);
  console.log(`software: node ${process.version}, redis-server ${await redisVersion(gw)}, wrangler ${wranglerVersion()} (dev, local workerd)`);
  console.log(`setup   : redis-server + Upstash REST gateway in a child process; the Worker bundled once and served by`);
  console.log(`          two \`wrangler dev\` (Redis store / Durable store); clients in this process (fetch, keep-alive)`);

  // 1. Uncontended cycles.
  const floors = await measureFloors(gw, stack.workers);
  const cycleRows: CycleRow[] = [];
  for (const target of cycleTargets(gw, redis, workers)) {
    const prefix = `${run}-u${cycleRows.length}`;
    cycleRows.push(await measureCycles(target, gw, 1, UNCONTENDED_MS, prefix));
    cycleRows.push(await measureCycles(target, gw, PARALLEL_LOOPS, UNCONTENDED_MS, prefix));
  }
  const ceiling = await measureCeiling(gw).catch((err) => ({ ok: false as const, reason: String(err?.message ?? err) }));
  const rows1 = cycleTableRows(cycleRows);
  const notes1 = [
    `~${UNCONTENDED_MS / 1000} s each; acquire (try once, ttl 10 s) + release. HTTP = requests the client sent; Upstash = requests this`,
    `process sent to the gateway (Worker rows: not visible, see scripts); scripts = EVAL/EVALSHA calls in Redis (INFO commandstats).`,
    `The 16 loops share one @upstash/redis client, whose auto-pipelining (on by default) batches concurrent commands per request.`,
  ];
  if (ceiling.ok) {
    rows1.push(["ceiling: redis-benchmark EVALSHA", `${CEILING_CLIENTS} conns`, `${int(ceiling.rps / 2)}`, ceiling.p50?.replace(" msec", "") ?? "—", "—", "—", "—", "—"]);
    notes1.push(`ceiling: ${int(ceiling.rps)} EVALSHA/s of lua/mutex_acquire.lua (p50 ${ceiling.p50 ?? "?"}), shown as cycles/s = EVALSHA/s / 2:`);
    notes1.push(`  ${ceiling.command}`);
  } else {
    notes1.push(`ceiling row skipped: ${ceiling.reason}`);
  }
  notes1.push(
    `floors (p50): Node -> gateway PING ${ms(floors.gatewayPing)} ms; Worker 404 (no store) ${ms(floors.worker404)} ms; Worker GET /healthz on the`,
    `  Redis store (one PING subrequest from workerd) ${ms(floors.workerHealthRedis)} ms. wrangler dev keeps a devtools inspector attached, and`,
    `  workerd reports every subrequest to it (Network events to wrangler's Node process): Redis-store Worker rows pay for that.`,
  );
  for (const r of cycleRows) if (r.note) notes1.push(`${r.label} x${r.loops}: ${r.note}`);
  printTable("1. Uncontended acquire+release cycles", CYCLE_HEADER, rows1, notes1);

  // 2. Handoff latency.
  const handoffRows: HandoffRow[] = [];
  for (const target of handoffTargets(gw, redis, workers)) {
    handoffRows.push(await measureHandoff(target, `${run}-h${handoffRows.length}`, { count: HANDOFFS, ms: HANDOFF_MAX_MS }));
  }
  const notes2 = [
    `release sent -> waiter's acquire resolves; up to ${HANDOFFS} handoffs or ${HANDOFF_MAX_MS / 1000} s per row. The holder releases once the`,
    `waiter waits (GET reports waiters 1 / first busy answer seen) and ${HOLD_MIN_MS}..${HOLD_MAX_MS} ms (uniform) after the waiter started.`,
    `waiter req = requests the waiter sent per handoff (the Worker's is one held-open POST).`,
  ];
  for (const r of handoffRows) if (r.note) notes2.push(`${r.label} (${r.settings}): ${r.note}`);
  printTable("2. Handoff latency (release -> next waiter granted)", HANDOFF_HEADER, handoffTableRows(handoffRows), notes2);

  // 3. Contended throughput.
  const contendedRows: ContendedRow[] = [];
  for (const target of contendedTargets(gw, redis, workers)) {
    contendedRows.push(await measureContended(target, gw, `${run}-c${contendedRows.length}`, CONTENDED_MS));
  }
  const notes3 = [
    `${CLIENTS} clients on one lock, each looping acquire (waiting) -> release with no work in between, ${CONTENDED_MS / 1000} s window.`,
    `gave up = acquires that returned without the lock; per client = grants of each client in the window. Worker on Redis:`,
    `per grant one release + the room's granting acquire + one busy try when the released client queues again.`,
  ];
  for (const r of contendedRows) if (r.note) notes3.push(`${r.label} (${r.settings}): ${r.note}`);
  printTable(`3. Contended throughput (${CLIENTS} clients, one lock)`, CONTENDED_HEADER, contendedTableRows(contendedRows), notes3);

  console.log(`\ndone in ${ms((Date.now() - startedAt) / 1000)} s (load avg ${os.loadavg()[0].toFixed(2)} at end)`);
}

let stopping: Promise<void> | undefined;
async function shutdown(code: number): Promise<never> {
  stopping ??= (stack?.stop() ?? Promise.resolve()).catch((err) => console.error(`bench: stopping the stack: ${err.message}`));
  await stopping;
  process.exit(code);
}

main().then(
  () => shutdown(0),
  (err) => {
    if (!stopping) console.error(`\nbench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return shutdown(1);
  },
);
