/**
 * `npm run bench`: figures for holdfast next to @upstash/lock on one local
 * stack. A benchmark, not a test: it prints tables and asserts nothing.
 * Bounded in time (every loop by count and time, a 15-minute watchdog: the flow row alone takes about 100 s), and
 * every process it starts is stopped at the end, also on error or Ctrl-C.
 */
import os from "node:os";
import path from "node:path";
import { measureCeiling, CEILING_CLIENTS, CEILING_REQUESTS } from "./ceiling";
import { upstashRedis, WorkerApi } from "./clients";
import { CONTENDED_HEADER, contendedTableRows, contendedTargets, measureContendedRows, type ContendedRow, type ContendedShape } from "./contended";
import { billableUnitsSection } from "./billableUnits";
import { cycleFloorSection } from "./cycleFloor";
import { workerInstructionsSection } from "./workerInstructions";
import { FLOOR_HEADER, floorTableRows, measureFloors } from "./floor";
import { measureVanished, VANISHED_HEADER, type VanishedRow, vanishedTableRows } from "./vanished";
import { PICKUP_MS } from "../src/limits";
import { HANDOFF_HEADER, handoffTableRows, handoffTargets, HOLD_MAX_MS, HOLD_MIN_MS, measureHandoffs, type HandoffRow } from "./handoff";
import { handoffOverRelay, relayContendedNote, relayHandoffNotes } from "./relay";
import { sdkContendedNotes, sdkContendedOverSocket, sdkHandoffNotes, sdkHandoffOverSocket } from "./sdkRatio";
import {
  measureReadMostly,
  READ_MOSTLY_HEADER,
  readMostlyTableRows,
  readMostlyTargets,
  type ReadMostlyRow,
  type ReadMostlyShape,
} from "./readMostly";
import { redisVersion } from "./redisInfo";
import { installFetchCounter } from "./roundTrips";
import { MARKET_HEADER, MARKET_SHAPES, marketTableRows, marketVariants, measureMarket, type MarketRow } from "./market";
import { recordFact, recordHandoff, writeResults } from "./results";
import { type BenchStack, ROOT, servingVersions, startBenchStack } from "./stack";
import { int, ms } from "./stats";
import { measureShippedWorker, SHIPPED_HEADER, shippedTableRows } from "./shippedWorker";
import { COMPARISON_HEADER, compareWithBaseline, comparisonVerdict, recordFigure, saveBaseline } from "./baseline";
import { INSTRUCTIONS_HEADER, instructionsTableRows, measureInstructions } from "./instructions";
import { printTable } from "./table";
import { flowSection } from "./flowRow";
import { FULL_TIMINGS, floodTable, measureFloodRows, QUICK_TIMINGS, SLACK } from "../chaos/flood";
import { CHAOS_API_KEYS } from "../chaos/lab";
import { startWorkerServer, type WorkerServer } from "../tools/serve-worker/serve.mjs";
import { measureScale, SCALE_HEADER, SCALE_LOCKS, SCALE_PER_LOCK, SCALE_WAITERS, type ScaleRow, scaleTableRows } from "./scale";
import { CYCLE_HEADER, cycleTableRows, cycleTargets, directCycleTargets, directLabels, measureCycles, type CycleRow } from "./uncontended";

/** `npm run bench -- --quick` (or BENCH_QUICK=1): every window and count cut down, for a smoke run. */
const QUICK = process.argv.includes("--quick") || process.env.BENCH_QUICK === "1";
const scale = (n: number) => (QUICK ? Math.max(1, Math.round(n / 4)) : n);
const UNCONTENDED_MS = scale(2000);
const PARALLEL_LOOPS = 16;
const CYCLE_ROUNDS = 5;
const HANDOFFS = scale(100);
const HANDOFF_MAX_MS = scale(20_000);
/** Rounds in which the holdfast socket rows and the relay floor take turns (table 2). */
const HANDOFF_ROUNDS = 5;
/** Rounds in which the socket, SDK and relay rows of tables 3 and 4 take turns, each with its share of the window. */
const CONTENDED_ROUNDS = 5;
/** No hold: the handoff machinery alone. */
const CONTENDED: ContendedShape = { clients: 8, holdMs: 0, windowMs: scale(3000) };
/** A 10 ms hold caps any lock at 100 grants/s: how close each client gets, and how fairly. */
const CONTENDED_HOLD: ContendedShape = { clients: 16, holdMs: 10, windowMs: scale(5000) };
/** The read-write lock's workload: readers share, a 5 ms hold caps a mutex at 200 grants/s. */
const READ_MOSTLY: ReadMostlyShape = { clients: 16, readShare: 0.9, holdMs: 5, windowMs: scale(5000) };
/** Seconds each market variant runs per shape. */
const MARKET_SECONDS = QUICK ? 1 : 3;
const RESULTS_DIR = path.join(ROOT, "bench", "results");
const WATCHDOG_MS = 900_000;

/** `BENCH_ONLY=1,5 npm run bench` runs only those sections (table 0, the floors, always runs; 1c, 1d: that table alone). */
const only = process.env.BENCH_ONLY?.split(",").map((x) => x.trim());
const wanted = (section: string) => !only || only.includes(section);

let stack: BenchStack | undefined;

async function main(): Promise<number> {
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
  // The relay (bench/relayWorker) is the floor of sections 2 and 4.
  stack = await startBenchStack({ relay: wanted("2") || wanted("4") });
  const { gateway: gw } = stack;
  const redis = upstashRedis(gw);
  const workers = { redis: new WorkerApi(stack.workers.redis, stack.apiKey), durable: new WorkerApi(stack.workers.durable, stack.apiKey) };
  const relay = stack.relay ? new WorkerApi(stack.relay, "relay-has-no-keys") : undefined;
  const run = `b${Date.now().toString(36)}`;

  const cpu = os.cpus()[0]?.model.trim() ?? "?";
  const command = process.env.npm_lifecycle_event === "bench" ? `npm run bench   (${process.env.npm_lifecycle_script})` : `tsx bench/run.ts`;
  const say = (line: string) => {
    console.log(line);
    recordFact(line);
  };
  say(`holdfast bench, ${new Date().toISOString()}${QUICK ? " (--quick: windows and counts cut to a quarter, market 1 s)" : ""}`);
  say(`command : ${command}${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(" ")}` : ""}`);
  say(`machine : ${os.cpus().length} cores (${cpu}), ${os.platform()} ${os.arch()}, load avg ${load0.toFixed(2)} at start`);
  say(`software: node ${process.version}, redis-server ${await redisVersion(gw)}, ${servingVersions()}`);
  say("figures are noisy on a shared machine: compare them only within one run");
  console.log(`setup   : redis-server + Upstash REST gateway in a child process; the Worker bundled once (wrangler deploy`);
  console.log(`          --dry-run) and served by workerd as production runs it (tools/serve-worker: bare \`workerd serve\` by`);
  console.log(`          default, HOLDFAST_SERVE_ENGINE=miniflare for Miniflare; no wrangler dev proxy worker, no inspector),`);
  console.log(`          one instance per store, DO state in a temp dir; clients in this process (fetch, keep-alive)`);

  // 0. Floors and the ceiling, in the same run, to read every other row against.
  const floors = await measureFloors(gw, stack.workers);
  const ceiling = await measureCeiling(gw, redis).catch((err) => ({ ok: false as const, reason: String(err?.message ?? err) }));
  const rows0 = floorTableRows(floors);
  const notes0 = [`one request at a time, ~1 s or 300 requests each, after 20 warm-up requests.`];
  if (ceiling.ok) {
    rows0.push(["ceiling: redis-benchmark EVALSHA mutex_acquire", ceiling.p50?.replace(" msec", "") ?? "—", "—", int(ceiling.rps)]);
    notes0.push(`ceiling: ${CEILING_REQUESTS} calls over ${CEILING_CLIENTS} connections, the script, KEYS and ARGV of a library try-lock:`);
    notes0.push(`  ${ceiling.command}`);
  } else {
    notes0.push(`ceiling row skipped: ${ceiling.reason}`);
  }
  printTable("0. Floors and ceiling (same run)", FLOOR_HEADER, rows0, notes0);

  if (wanted("1")) await cyclesSection(gw, redis, workers, run, floors, ceiling);
  // 1c. The uncontended cycle through the Worker over a bare Worker doing the same store round trips.
  if (wanted("1") || wanted("1c")) await cycleFloorSection(gw, workers, run, QUICK);
  // 1d. The same cycle's instructions in workerd over the floor's (callgrind): a figure load does not move.
  if (wanted("1") || wanted("1d")) await workerInstructionsSection(gw, stack.vars, run, QUICK);
  if (wanted("2")) await handoffSection(gw, redis, workers, run, floors, relay);
  // 3 and 4. Contended throughput, without and with work under the lock.
  if (wanted("3")) await contendedSection("3", CONTENDED, gw, redis, workers, run);
  if (wanted("4")) await contendedSection("4", CONTENDED_HOLD, gw, redis, workers, run, relay);
  if (wanted("5")) await readMostlySection(workers, run);
  if (wanted("6")) await marketSection(gw, redis, workers, run);
  if (wanted("7")) await shippedSection(stack.apiKey);
  if (wanted("8")) await vanishedSection(workers, run);
  if (wanted("9")) await scaleSection(workers, run);
  if (wanted("10")) await floodSection(gw);
  if (wanted("11")) await billableUnitsSection(gw, run, QUICK);
  // 12. A flow limit (concurrency and rate) against a semaphore plus @upstash/ratelimit.
  if (wanted("12")) await flowSection(stack, QUICK);

  const args = process.argv.slice(2).filter((a) => a !== "--save-baseline");
  const missed = baselineSection(
    `${process.env.BENCH_ONLY ? `BENCH_ONLY=${process.env.BENCH_ONLY} ` : ""}npm run bench${args.length ? ` -- ${args.join(" ")}` : ""}`,
  );
  for (const file of writeResults(RESULTS_DIR)) console.log(`written : ${path.relative(ROOT, file)}`);

  console.log(`\ndone in ${ms((Date.now() - startedAt) / 1000)} s (load avg ${os.loadavg()[0].toFixed(2)} at end)`);
  if (missed.length) {
    console.error(`\nbench: ${missed.length} figure(s) this run was asked for were not measured: ${missed.join("; ")}`);
    return 1;
  }
  return 0;
}

type Workers = { redis: WorkerApi; durable: WorkerApi };

const BASELINE = path.join(ROOT, "bench/baseline.json");

/**
 * This run's key figures against the committed ones; `-- --save-baseline` makes this run the committed one.
 * Answers the figures of asked-for sections that were not measured (the run then exits non-zero).
 */
function baselineSection(command: string): string[] {
  const comparison = compareWithBaseline(BASELINE, wanted);
  if (comparison) {
    const { rows, baseline } = comparison;
    printTable(`Compared with the committed baseline (bench/baseline.json, ${baseline.at.slice(0, 10)})`, COMPARISON_HEADER, rows, [
      `baseline command: ${baseline.command}. A figure this run did not produce, or could not compute (no samples), is NOT MEASURED;`,
      `wall-clock figures from another machine or a --quick run differ by more than their noise, so read a flag there against the`,
      `instructions, which do not move with load.`,
      comparisonVerdict(comparison),
    ]);
  } else console.log("\nno committed baseline (bench/baseline.json) to compare with");
  if (process.argv.includes("--save-baseline")) {
    saveBaseline(BASELINE, command);
    console.log(`written : bench/baseline.json (this run's key figures, to commit)`);
  }
  return comparison?.missedAsked ?? [];
}

/**
 * 10. A wait socket flood in one namespace against another's try-lock + release, holdfast beside the bare
 * object's floor (chaos/flood.ts, the fault suite's flood rows, with their verdict), each Worker of its own
 * with the fault suite's keys.
 */
async function floodSection(gw: BenchStack["gateway"]): Promise<void> {
  const vars = { API_KEYS: CHAOS_API_KEYS };
  const serve = (extra: Record<string, string>) => {
    let server: Promise<WorkerServer> = startWorkerServer({ vars: { ...vars, ...extra } });
    let url = "";
    return {
      get url() {
        return url;
      },
      async start() {
        url = (await server).url;
      },
      async restart() {
        await (await server).stop();
        server = startWorkerServer({ vars: { ...vars, ...extra } });
        url = (await server).url;
      },
      async stop() {
        await (await server).stop();
      },
    };
  };
  const redis = serve({ UPSTASH_REDIS_REST_URL: gw.url, UPSTASH_REDIS_REST_TOKEN: gw.token });
  const durable = serve({});
  try {
    await Promise.all([redis.start(), durable.start()]);
    const rows = await measureFloodRows(
      [
        { target: "Redis, Worker", worker: redis },
        { target: "Durable, Worker", worker: durable },
      ],
      QUICK ? QUICK_TIMINGS : FULL_TIMINGS,
    );
    const failures = rows.flatMap((r) => r.failures.map((f) => `${r.side.target}: ${f}`));
    console.log(`\n10. A wait socket flood in another namespace, holdfast beside the bare object's floor (same run)\n`);
    console.log(floodTable(rows));
    console.log(
      [
        "",
        "one flooder, ten, 100 sockets at once from two keys on 5 locks, then 50 clients churning handshakes (a raw client: masked heartbeats",
        "in batches of 500 as fast as the connection drains, close frames ignored until the connection is gone, back 100 ms after; in a",
        "process of its own at nice 10), while another namespace's try-lock + release runs every 20 ms; ratios are to that namespace's",
        "unloaded figure in the same run. The floor: a bare Durable Object that closes a socket at its 20th frame and takes every reconnect",
        `(bench/floodFloorWorker), flooded right before the stores, flood by flood. Bound: p50 ${SLACK}x the floor's ratio, p99 ${SLACK}x the floor's p99.`,
        failures.length ? `beyond the bound: ${failures.join("; ")}` : "every row within the bound",
      ].join("\n"),
    );
    for (const r of rows) {
      for (const p of r.side.phases)
        recordFact(
          `flood ${r.side.target}, ${p.flood.title}: p50 ${(p.probe.p50 / r.side.unloaded.p50).toFixed(1)}x, p99 ${(p.probe.p99 / r.side.unloaded.p99).toFixed(1)}x`,
        );
    }
  } finally {
    await Promise.all([redis.stop(), durable.stop()]);
  }
}

/** 9. The scale of one lock: thousands of wait sockets on one lock object, and over many. */
async function scaleSection(workers: Workers, run: string): Promise<void> {
  const rows: ScaleRow[] = [];
  const shape = { waiters: scale(SCALE_WAITERS), locks: scale(SCALE_LOCKS) };
  for (const [store, api] of [
    ["Redis", workers.redis],
    ["Durable", workers.durable],
  ] as const) {
    rows.push(...(await measureScale(store, api, `${run}-s${rows.length}`, shape)));
  }
  const notes = [
    `one lock: a holder and ${int(shape.waiters)} wait sockets behind it (the first 50 queued one by one, the rest 250 at a time), then the`,
    "first 50 take the lock in turn (ack, held, release over the socket), which must follow the order they queued; again: the same right",
    "after on the same lock (does the next crowd reuse the memory the first left? RSS seldom shrinks). many: each lock a holder and up to",
    `${SCALE_PER_LOCK} waiters (as open files allow), one handoff on 30 of them. handoff = release sent -> next waiter's granted / held; 1 in line:`,
    "a second lock of the same Worker, one waiter in line, a handoff right after each of the row's (paired against the machine's load);",
    "x 1 in line = the p50s' ratio. RSS: the workerd serving that store",
    "(/proc VmRSS) before, with every socket open, after all closed and RSS stopped moving; KiB per socket = (with - before) / sockets.",
  ];
  if (rows.some((r) => r.fifo.includes("internal")))
    notes.push(
      "a waiter that ended 500 internal lost its turn: workerd's log above says why (QuotaExceededError: an object's 10,000 pending timeouts).",
    );
  for (const r of rows) for (const n of r.notes) notes.push(`${r.store} ${r.shape}: ${n}`);
  printTable("9. Scale of one lock (wait sockets on one lock object, and over many)", SCALE_HEADER, scaleTableRows(rows), notes);
}

/** 8. Vanished waiters ahead of a live one, per store and wait channel. */
async function vanishedSection(workers: Workers, run: string): Promise<void> {
  const rows: VanishedRow[] = [];
  for (const [store, api] of [
    ["Redis", workers.redis],
    ["Durable", workers.durable],
  ] as const) {
    rows.push(await measureVanished(store, api, "wait socket", 100, `${run}-v${rows.length}`));
    rows.push(await measureVanished(store, api, "HTTP long-poll", 30, `${run}-v${rows.length}`));
  }
  const notes = [
    "N waiters queue on a held lock, a live one queues behind them, the N go away (a socket closed; an HTTP request aborted,",
    `its connection closed), and the holder releases at once. An HTTP waiter that went away unseen holds the lock up to PICKUP_MS (${PICKUP_MS} ms).`,
  ];
  for (const r of rows) if (r.note) notes.push(`${r.store} ${r.channel}: ${r.note}`);
  printTable("8. Vanished waiters ahead of a live one (release -> live waiter granted)", VANISHED_HEADER, vanishedTableRows(rows), notes);
}

/** 7. The Worker as it ships: bundle size and cold start, next to a hello-world Worker. */
async function shippedSection(apiKey: string): Promise<void> {
  const starts = QUICK ? 2 : 7;
  const rows = await measureShippedWorker(starts, apiKey);
  printTable("7. The Worker as it ships (wrangler deploy --dry-run, minified)", SHIPPED_HEADER, shippedTableRows(rows), [
    `bundle: every module wrangler would upload; gzip -9 here (wrangler's own figure is printed by \`wrangler deploy --dry-run\`).`,
    `cold start: ${starts} starts each, taking turns: spawning \`workerd serve\` (which compiles every module before it listens) to the end of the first answer.`,
  ]);
}
type Floors = Awaited<ReturnType<typeof measureFloors>>;

/**
 * The comparison the library is held to: its cycles/s over @upstash/lock's,
 * sequential and with 16 loops, from this run's rows.
 */
function libraryVsUpstashLock(rows: CycleRow[]): string {
  const rate = (label: string, loops: number) => rows.find((r) => r.label === label && r.loops === loops)?.cyclesPerSec;
  const ratioAt = (loops: number) => {
    const lib = rate(directLabels.library, loops);
    const ul = rate(directLabels.upstashLock, loops);
    return lib && ul ? `${(lib / ul).toFixed(2)}x` : "—";
  };
  return (
    `library / @upstash/lock in this run: sequential ${ratioAt(1)}, ${PARALLEL_LOOPS} loops ${ratioAt(PARALLEL_LOOPS)}. With ${PARALLEL_LOOPS} loops the client, ` +
    "the gateway and redis-server share this machine's cores, so a cycle's CPU in all three sets the rate (`npm run bench:cycles` breaks it down)."
  );
}

/** 1. Uncontended cycles. */
async function cyclesSection(
  gw: BenchStack["gateway"],
  redis: ReturnType<typeof upstashRedis>,
  workers: Workers,
  run: string,
  floors: Floors,
  ceiling: Awaited<ReturnType<typeof measureCeiling>> | { ok: false; reason: string },
) {
  const cycleRows: CycleRow[] = [];
  // The library and @upstash/lock take turns, CYCLE_ROUNDS short rounds each, each going first in
  // every other round, and each row is its median round: a machine that slows down mid-run then
  // slows both, and neither is always the one that runs right after the other.
  const direct = directCycleTargets(gw, redis);
  const rounds = new Map<string, CycleRow[]>(); // by label and loop count
  for (const loops of [1, PARALLEL_LOOPS]) {
    for (let round = 0; round < CYCLE_ROUNDS; round++) {
      for (const target of round % 2 === 0 ? direct : [...direct].reverse()) {
        const row = await measureCycles(target, gw, loops, UNCONTENDED_MS / CYCLE_ROUNDS, `${run}-u${round}-${target.label.length}`);
        rounds.set(`${target.label}/${loops}`, [...(rounds.get(`${target.label}/${loops}`) ?? []), row]);
      }
    }
  }
  for (const target of direct) for (const loops of [1, PARALLEL_LOOPS]) cycleRows.push(medianRound(rounds.get(`${target.label}/${loops}`) ?? []));
  for (const target of cycleTargets(gw, redis, workers).filter((t) => !t.direct)) {
    const prefix = `${run}-u${cycleRows.length}`;
    cycleRows.push(await measureCycles(target, gw, 1, UNCONTENDED_MS, prefix));
    cycleRows.push(await measureCycles(target, gw, PARALLEL_LOOPS, UNCONTENDED_MS, prefix));
  }
  const rows1 = cycleTableRows(cycleRows);
  const notes1 = [
    `~${UNCONTENDED_MS / 1000} s each (library and @upstash/lock: ${CYCLE_ROUNDS} alternating rounds, the median shown); acquire (try once, ttl 10 s) + release. HTTP = requests the client sent; Upstash = requests this`,
    `process sent to the gateway (Worker rows: not visible, see scripts); scripts = EVAL/EVALSHA calls in Redis (INFO commandstats).`,
    `The 16 loops share one @upstash/redis client, whose auto-pipelining (on by default) batches concurrent commands per request.`,
    libraryVsUpstashLock(cycleRows),
  ];
  for (const r of cycleRows) {
    recordFigure({ name: `1. ${r.label} x${r.loops} cycles/s`, value: r.cyclesPerSec, unit: "/s", better: "higher", noise: 0.35 });
  }
  // The same comparison as a number that does not move with load (table 1b).
  const instructions = await measureInstructions(QUICK ? 250 : 1000).catch((err) => ({ ok: false as const, reason: String(err?.message ?? err) }));
  notes1.push(
    instructions.ok
      ? `Redis instructions per cycle (callgrind, table 1b): ${instructionsTableRows(instructions)
          .map(([label, k, , x]) => `${label} ${k} (${x})`)
          .join(", ")}.`
      : `Redis instructions per cycle: not measured (${instructions.reason}).`,
  );
  if (ceiling.ok) {
    rows1.push([
      "ceiling: redis-benchmark EVALSHA",
      `${CEILING_CLIENTS} conns`,
      `${int(ceiling.rps / 2)}`,
      ceiling.p50?.replace(" msec", "") ?? "—",
      "—",
      "—",
      "—",
      "—",
    ]);
    notes1.push(`ceiling row: table 0's EVALSHA/s of mutex_acquire shown as cycles/s = EVALSHA/s / 2.`);
  }
  notes1.push(
    `floors (p50, table 0): gateway PING ${ms(floors.gatewayPing.p50)} ms; Worker 404 ${ms(floors.worker404.redis.p50)} ms (Redis-store instance),`,
    `  ${ms(floors.worker404.durable.p50)} ms (Durable-store instance).`,
  );
  for (const r of cycleRows) if (r.note) notes1.push(`${r.label} x${r.loops}: ${r.note}`);
  printTable("1. Uncontended acquire+release cycles", CYCLE_HEADER, rows1, notes1);
  if (instructions.ok) {
    for (const r of instructions.rows) {
      const mean = r.perCycle.reduce((a, b) => a + b, 0) / r.perCycle.length;
      recordFigure({ name: `1b. ${r.label} Redis instructions per cycle`, value: mean, unit: "", better: "lower", noise: 0.03 });
    }
    printTable(
      `1b. Redis instructions per acquire+release (callgrind, ${instructions.cycles} cycles per round)`,
      INSTRUCTIONS_HEADER,
      instructionsTableRows(instructions),
      [
        `${instructions.valgrind}; a second redis-server under callgrind (cron at 1 Hz) behind the gateway, key-rule check off; \`npm run bench:instructions\`.`,
        "Deterministic to within ~2 % (rounds differ by their order): judge script changes by this, not by the wall-clock rows.",
      ],
    );
  }
}

/** The round with the median rate. */
function medianRound(rows: CycleRow[]): CycleRow {
  return [...rows].sort((a, b) => a.cyclesPerSec - b.cyclesPerSec)[Math.floor(rows.length / 2)];
}

/** 2. Handoff latency. */
async function handoffSection(
  gw: BenchStack["gateway"],
  redis: ReturnType<typeof upstashRedis>,
  workers: Workers,
  run: string,
  floors: Floors,
  relay: WorkerApi | undefined,
) {
  const targets = handoffTargets(gw, redis, workers, floors, relay);
  const handoffRows: HandoffRow[] = await measureHandoffs(targets, (i) => `${run}-h${i}`, { count: HANDOFFS, ms: HANDOFF_MAX_MS }, HANDOFF_ROUNDS);
  const notes2 = [
    `release sent -> waiter's acquire resolves; up to ${HANDOFFS} handoffs or ${HANDOFF_MAX_MS / 1000} s per row. The holder releases once the`,
    `waiter waits (GET reports waiters 1 / first busy answer seen) and ${HOLD_MIN_MS}..${HOLD_MAX_MS} ms (uniform) after the waiter started.`,
    `waiter req = HTTP requests the waiter sent per handoff (one held-open POST; a wait socket sends none). floor p50 = one plain request to`,
    `the same origin (table 0): a 404 from the same Worker, or a gateway PING for clients that talk to Upstash themselves.`,
  ];
  notes2.push(...relayHandoffNotes(handoffRows, floors.gatewayPing.p50));
  notes2.push(...sdkHandoffNotes(handoffRows));
  for (const o of sdkHandoffOverSocket(handoffRows))
    recordFigure({ name: `2. ${o.store} store SDK handoff p50 / socket handoff p50`, value: o.p50, unit: "x", better: "lower", noise: 0.3 });
  for (const r of handoffRows) if (r.note) notes2.push(`${r.label} (${r.settings}): ${r.note}`);
  for (const r of handoffRows) {
    recordFigure({ name: `2. ${r.label} (${r.settings}) handoff p50`, value: r.summary.p50, unit: "ms", better: "lower", noise: 0.5 });
  }
  if (relay) {
    for (const o of handoffOverRelay(handoffRows, floors.gatewayPing.p50)) {
      recordFigure({ name: `2. ${o.store} store socket handoff p50 / relay floor p50`, value: o.over, unit: "x", better: "lower", noise: 0.3 });
      // The Redis store's floor (issue 38's decision): the relay plus the one store round trip it cannot skip.
      if (o.overWithGateway !== undefined) {
        const name = `2. ${o.store} store socket handoff p50 / (relay floor + one gateway PING) p50`;
        recordFigure({ name, value: o.overWithGateway, unit: "x", better: "lower", noise: 0.3 });
      }
    }
  }
  printTable("2. Handoff latency (release -> next waiter granted)", HANDOFF_HEADER, handoffTableRows(handoffRows), notes2);
  recordHandoff(handoffRows.map((r) => ({ label: `${r.label} (${r.settings})`, p50: r.summary.p50, p99: r.summary.p99, max: r.summary.max })));
}

/** 6. The market of "Redis in Action" 6.2: optimistic WATCH against coarse and fine-grained locks. */
async function marketSection(gw: BenchStack["gateway"], redis: ReturnType<typeof upstashRedis>, workers: Workers, run: string) {
  const rows: MarketRow[] = [];
  for (const shape of MARKET_SHAPES) {
    for (const [v, variant] of marketVariants(gw, workers).entries()) {
      rows.push(await measureMarket(variant, shape, `${run}:m${shape.listers}x${shape.buyers}v${v}`, redis, gw.redisPort, MARKET_SECONDS));
    }
  }
  const notes6 = [
    `listers move an item from their inventory (a set) onto the market (a sorted set); buyers pick a listed item (ZRANDMEMBER),`,
    `check its price against their funds and move funds and item in one step. ${MARKET_SECONDS} s per row; the sellers' funds are checked`,
    `against the items bought after every row (a double or lost sale fails the bench). retries = WATCH aborts that started a step over;`,
    `wasted grants = a lock granted for an item already sold; ops/60 s = (listed + bought) per minute at this row's rate. Under a lock`,
    `the data steps are one MULTI/EXEC over REST; the WATCH baseline talks to redis-server over TCP (it has no REST form).`,
    `Each locked step here pays HTTP round trips to the gateway (and to the Worker), so read the shape (retries, wasted grants,`,
    `how each scales from 1 x 1 to 5 x 5) rather than the absolute rate.`,
  ];
  printTable("6. The market (Redis in Action 6.2: list and buy)", MARKET_HEADER, marketTableRows(rows), notes6);
}

/** 5. Read-mostly: the read-write lock against the mutex on the same workload. */
async function readMostlySection(workers: Workers, run: string) {
  const readRows: ReadMostlyRow[] = [];
  for (const t of readMostlyTargets(workers)) {
    readRows.push(await measureReadMostly(t.label, t.lock, t.acquire(`${run}-r${readRows.length}`), READ_MOSTLY));
  }
  const notes5 = [
    `${READ_MOSTLY.clients} clients on one lock, each looping: read (${READ_MOSTLY.readShare * 100} %) or write, acquire (waitMs 30 s) -> hold ${READ_MOSTLY.holdMs} ms -> release,`,
    `${READ_MOSTLY.windowMs / 1000} s window; every tenth op of a client writes. The mutex rows take the mutex for every op (cap ${int(1000 / READ_MOSTLY.holdMs)}/s).`,
    `wait = acquire sent -> granted, in ms; write wait is the writers' wait under the steady stream of readers.`,
  ];
  for (const r of readRows) if (r.errors) notes5.push(`${r.label} ${r.lock}: ${r.errors} errors, first: ${r.firstError}`);
  printTable("5. Read-mostly workload (read-write lock vs mutex)", READ_MOSTLY_HEADER, readMostlyTableRows(readRows), notes5);
}

async function contendedSection(
  no: string,
  shape: ContendedShape,
  gw: BenchStack["gateway"],
  redis: ReturnType<typeof upstashRedis>,
  workers: { redis: WorkerApi; durable: WorkerApi },
  run: string,
  relay?: WorkerApi,
): Promise<void> {
  const rows: ContendedRow[] = await measureContendedRows(
    contendedTargets(gw, redis, workers, relay),
    gw,
    (i) => `${run}-c${no}-${i}`,
    shape,
    CONTENDED_ROUNDS,
  );
  const work = shape.holdMs ? `hold ${shape.holdMs} ms` : "no work in between";
  const notes = [
    `${shape.clients} clients on one lock, each looping acquire (waiting) -> ${work} -> release, ${shape.windowMs / 1000} s window`,
    `  (the socket, SDK and relay rows: ${CONTENDED_ROUNDS} alternating rounds of a ${CONTENDED_ROUNDS}th of it each, each first in turn, merged).`,
    shape.holdMs
      ? `of 1000/hold = grants/s against the ${int(1000 / shape.holdMs)}/s a ${shape.holdMs} ms hold allows. max/min = most/fewest grants of one client.`
      : `max/min = most/fewest grants of one client (∞: a client got none).`,
    `wait = granted acquire, sent -> grant (includes waiting in line). gave up = acquires that returned without the lock.`,
    `scripts/grant = EVAL+EVALSHA calls in Redis (INFO commandstats before/after, drain included) / grants (drain included).`,
  ];
  notes.push(...relayContendedNote(rows));
  notes.push(...sdkContendedNotes(rows));
  for (const o of sdkContendedOverSocket(rows))
    recordFigure({ name: `${no}. ${o.store} store SDK grants/s / socket grants/s`, value: o.rate, unit: "x", better: "higher", noise: 0.2 });
  for (const r of rows) if (r.note) notes.push(`${r.label} (${r.settings}): ${r.note}`);
  const title = `${no}. Contended throughput (${shape.clients} clients, one lock, ${work})`;
  printTable(title, CONTENDED_HEADER, contendedTableRows(rows), notes);
}

let stopping: Promise<void> | undefined;
async function shutdown(code: number): Promise<never> {
  stopping ??= (stack?.stop() ?? Promise.resolve()).catch((err) => console.error(`bench: stopping the stack: ${err.message}`));
  await stopping;
  process.exit(code);
}

main().then(
  (code) => shutdown(code),
  (err) => {
    if (!stopping) console.error(`\nbench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return shutdown(1);
  },
);
