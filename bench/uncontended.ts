/**
 * Figure 1: uncontended acquire+release cycles, sequentially on one name and
 * with 16 parallel loops on distinct names, and what each cycle costs in
 * requests: sent by the client, reaching the gateway from this process, and
 * Lua script calls seen by Redis.
 */
import type { Redis } from "@upstash/redis";
import { libraryLock, type Release, upstashLock, type WorkerApi } from "./clients";
import { runLoops } from "./loop";
import { scriptCalls } from "./redisInfo";
import { requestsTo } from "./roundTrips";
import type { Gateway } from "./stack";
import { int, ms, percentile, ratio } from "./stats";

export interface CycleTarget {
  label: string;
  /** Origin the client's own requests go to. */
  origin: string;
  /** The client talks to the gateway itself, so its Upstash requests are countable here. */
  direct: boolean;
  usesRedis: boolean;
  /** One acquire (try once) for `name`; resolves to its release. */
  acquirer(name: string): () => Promise<Release | null>;
}

export const directLabels = { library: "holdfast Mutex (library)", upstashLock: "@upstash/lock" } as const;

/** The clients that talk to Upstash themselves: the library and @upstash/lock. */
export function directCycleTargets(gw: Gateway, redis: Redis): CycleTarget[] {
  return [
    {
      label: directLabels.library,
      origin: gw.url,
      direct: true,
      usesRedis: true,
      acquirer: (name) => {
        const lock = libraryLock(redis, name);
        return () => lock.acquire(0);
      },
    },
    {
      label: directLabels.upstashLock,
      origin: gw.url,
      direct: true,
      usesRedis: true,
      acquirer: (name) => {
        const lock = upstashLock(redis, name, { attempts: 1, delay: 0 });
        return () => lock.acquire();
      },
    },
  ];
}

export function cycleTargets(gw: Gateway, redis: Redis, workers: { redis: WorkerApi; durable: WorkerApi }): CycleTarget[] {
  return [
    ...directCycleTargets(gw, redis),
    {
      label: "holdfast Worker API, Redis store",
      origin: workers.redis.base,
      direct: false,
      usesRedis: true,
      acquirer: (name) => () => workers.redis.acquire(name),
    },
    {
      label: "holdfast Worker API, Durable store",
      origin: workers.durable.base,
      direct: false,
      usesRedis: false,
      acquirer: (name) => () => workers.durable.acquire(name),
    },
  ];
}

export interface CycleRow {
  label: string;
  loops: number;
  cyclesPerSec: number;
  p50: number;
  p99: number;
  httpPerCycle: number;
  upstashPerCycle?: number;
  scriptsPerCycle?: number;
  note?: string;
}

export async function measureCycles(target: CycleTarget, gw: Gateway, loops: number, durationMs: number, prefix: string): Promise<CycleRow> {
  const acquires = Array.from({ length: loops }, (_, i) => target.acquirer(`${prefix}-${loops}-${i}`));
  const cycle = async (i: number) => {
    const release = await acquires[i]();
    if (!release) throw new Error("lock unexpectedly busy");
    await release();
  };
  // Warm-up: connections, the Worker's isolate and script cache, DO instances, and the JIT
  // (a few hundred cycles, so the first client measured does not run cold).
  const warmUntil = performance.now() + 250;
  for (let k = 0; k < 3 || performance.now() < warmUntil; k++) await Promise.all(acquires.map((_, i) => cycle(i)));

  const req0 = requestsTo(target.origin);
  const gw0 = requestsTo(gw.url);
  const s0 = target.usesRedis ? await scriptCalls(gw) : 0;
  const r = await runLoops(loops, { ms: durationMs, max: 500_000 }, cycle);
  const s1 = target.usesRedis ? await scriptCalls(gw) : 0;
  const n = r.iterations;
  return {
    label: target.label,
    loops,
    cyclesPerSec: n / (r.elapsedMs / 1000),
    p50: percentile(r.durations, 50),
    p99: percentile(r.durations, 99),
    httpPerCycle: (requestsTo(target.origin) - req0) / n,
    upstashPerCycle: target.direct ? (requestsTo(gw.url) - gw0) / n : undefined,
    scriptsPerCycle: target.usesRedis ? (s1 - s0) / n : undefined,
    note: r.errors ? `${r.errors} errors, first: ${r.firstError}` : undefined,
  };
}

export function cycleTableRows(rows: CycleRow[]): string[][] {
  return rows.map((r) => [
    r.label,
    r.loops === 1 ? "1 (seq)" : String(r.loops),
    int(r.cyclesPerSec),
    ms(r.p50),
    ms(r.p99),
    ratio(r.httpPerCycle),
    ratio(r.upstashPerCycle),
    ratio(r.scriptsPerCycle),
  ]);
}

export const CYCLE_HEADER = ["client", "loops", "cycles/s", "p50 ms", "p99 ms", "HTTP/cyc", "Upstash/cyc", "scripts/cyc"];
