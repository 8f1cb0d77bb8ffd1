/**
 * Figure 3: N clients on one lock, each looping acquire (waiting) -> hold ->
 * release for a fixed window. With a hold of H ms no lock can grant more than
 * 1000/H per second, so grants/s is read against that ceiling; with no hold it
 * measures the handoff machinery alone. Also: what each grant costs in
 * requests, how many acquires gave up, how evenly the grants were spread over
 * the clients (max/min per client), and how long a granted acquire waited.
 */
import type { Redis } from "@upstash/redis";
import { libraryLock, type Release, sdkAcquire, upstashLock, type UpstashRetry, type WorkerApi } from "./clients";
import { RELAY_LABEL, SDK_SETTINGS, sdkLabel } from "./handoff";
import { sleep, withTimeout } from "./loop";
import { scriptCalls } from "./redisInfo";
import { requestsTo } from "./roundTrips";
import type { Gateway } from "./stack";
import { int, ms, percentile, ratio } from "./stats";

const WAIT_MS = 10_000;
/** After the window, in-flight acquires get this long before they are aborted. */
const DRAIN_MS = 5_000;
const MAX_ERRORS = 20;

export interface ContendedTarget {
  label: string;
  settings: string;
  origin: string;
  direct: boolean;
  usesRedis: boolean;
  /** A client of lock `name`; signal aborts waits still running after the window. */
  client(name: string, signal: AbortSignal): () => Promise<Release | null>;
  /** Measured in alternating rounds with the other targets that say so (measureContendedRows), for a fair ratio between them. */
  takesTurns?: boolean;
}

/**
 * Every target; with `relay` (the relay Worker, bench/relayWorker) also its floor row, driven by the same socket client.
 * The socket rows, the SDK's (one HoldfastClient per client) and the relay's take turns.
 */
export function contendedTargets(gw: Gateway, redis: Redis, workers: { redis: WorkerApi; durable: WorkerApi }, relay?: WorkerApi): ContendedTarget[] {
  const worker = (label: string, api: WorkerApi, usesRedis: boolean, channel: "HTTP" | "socket"): ContendedTarget => ({
    label,
    settings: `${channel === "HTTP" ? "HTTP long-poll" : "wait socket, release on it"}, waitMs ${WAIT_MS}`,
    origin: api.base,
    direct: false,
    usesRedis,
    client: (name, signal) => () => (channel === "HTTP" ? api.acquire(name, WAIT_MS, signal) : api.socketAcquire(name, WAIT_MS, signal)),
    takesTurns: channel === "socket",
  });
  const sdk = (store: "Redis" | "Durable", api: WorkerApi): ContendedTarget => ({
    label: sdkLabel(store),
    settings: SDK_SETTINGS,
    origin: api.base,
    direct: false,
    usesRedis: store === "Redis",
    client: (name, signal) => {
      const client = api.sdk();
      return () => sdkAcquire(client, name, WAIT_MS, signal);
    },
    takesTurns: true,
  });
  const ul = (settings: string, retry?: UpstashRetry): ContendedTarget => ({
    label: "@upstash/lock",
    settings,
    origin: gw.url,
    direct: true,
    usesRedis: true,
    client: (name) => {
      const lock = upstashLock(redis, name, retry);
      return () => lock.acquire();
    },
  });
  return [
    worker("holdfast Worker API, Redis store", workers.redis, true, "HTTP"),
    worker("holdfast Worker API, Redis store", workers.redis, true, "socket"),
    worker("holdfast Worker API, Durable store", workers.durable, false, "HTTP"),
    worker("holdfast Worker API, Durable store", workers.durable, false, "socket"),
    sdk("Redis", workers.redis),
    sdk("Durable", workers.durable),
    ...(relay ? [worker(RELAY_LABEL, relay, false, "socket")] : []),
    {
      label: "holdfast Mutex (library)",
      settings: `waitMs ${WAIT_MS}, backoff`,
      origin: gw.url,
      direct: true,
      usesRedis: true,
      client: (name, signal) => {
        const lock = libraryLock(redis, name);
        return () => lock.acquire(WAIT_MS, signal);
      },
    },
    ul("retry 60 x 50 ms", { attempts: 60, delay: 50 }),
    ul("default retry (3 x 100 ms)"),
  ];
}

/** One contended run: how many clients, how long each holds a grant, how long the window is. */
export interface ContendedShape {
  clients: number;
  holdMs: number;
  windowMs: number;
}

export interface ContendedRow {
  label: string;
  settings: string;
  holdMs: number;
  grantsPerSec: number;
  /** Durations of the acquires that were granted (sent -> grant), in ms. */
  waits: number[];
  httpPerGrant: number;
  upstashPerGrant?: number;
  scriptsPerGrant?: number;
  gaveUp: number;
  perClient: number[];
  /** Grants in all (drain included) and the window, to merge rounds. */
  total: number;
  windowMs: number;
  note?: string;
}

export async function measureContended(target: ContendedTarget, gw: Gateway, name: string, shape: ContendedShape): Promise<ContendedRow> {
  const { windowMs, holdMs } = shape;
  const abort = new AbortController();
  const clients = Array.from({ length: shape.clients }, () => target.client(name, abort.signal));
  // Warm-up: one uncontended grant per client.
  for (const c of clients) await (await c())?.();

  const req0 = requestsTo(target.origin);
  const gw0 = requestsTo(gw.url);
  const s0 = target.usesRedis ? await scriptCalls(gw) : 0;
  const perClient = new Array<number>(shape.clients).fill(0);
  const waits: number[] = [];
  let inWindow = 0;
  let total = 0;
  let gaveUp = 0;
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const end = t0 + windowMs;
  const drainTimer = setTimeout(() => abort.abort(), windowMs + DRAIN_MS);
  await withTimeout(
    Promise.all(
      clients.map(async (acquire, i) => {
        while (performance.now() < end && total < 1_000_000 && errors < MAX_ERRORS) {
          try {
            const sent = performance.now();
            const release = await acquire();
            if (!release) {
              gaveUp++;
              continue;
            }
            total++;
            const granted = performance.now();
            if (granted <= end) {
              inWindow++;
              perClient[i]++;
              waits.push(granted - sent);
            }
            if (holdMs) await sleep(holdMs); // the work done under the lock
            await release();
          } catch (err) {
            if (abort.signal.aborted) break;
            errors++;
            firstError ??= err instanceof Error ? err.message : String(err);
          }
        }
      }),
    ),
    windowMs + DRAIN_MS + 10_000,
    `contended run of ${target.label}`,
  ).finally(() => clearTimeout(drainTimer));
  const s1 = target.usesRedis ? await scriptCalls(gw) : 0;
  return {
    label: target.label,
    settings: target.settings,
    holdMs,
    grantsPerSec: inWindow / (windowMs / 1000),
    waits,
    httpPerGrant: (requestsTo(target.origin) - req0) / total,
    upstashPerGrant: target.direct ? (requestsTo(gw.url) - gw0) / total : undefined,
    scriptsPerGrant: target.usesRedis ? (s1 - s0) / total : undefined,
    gaveUp,
    perClient,
    total,
    windowMs,
    note: errors ? `${errors} errors, first: ${firstError}` : undefined,
  };
}

/**
 * Each target's row, in the targets' order. Those that take turns run in `rounds` alternating rounds,
 * each with its share of the window and each going first in turn (as measureHandoffs does): a machine
 * that slows down mid-run slows them all. Their rows merge their rounds.
 */
export async function measureContendedRows(
  targets: ContendedTarget[],
  gw: Gateway,
  nameOf: (index: number) => string,
  shape: ContendedShape,
  rounds: number,
): Promise<ContendedRow[]> {
  const rows: ContendedRow[] = [];
  const turns = targets.flatMap((t, i) => (t.takesTurns ? [i] : []));
  for (const [i, target] of targets.entries()) {
    if (!target.takesTurns) rows[i] = await measureContended(target, gw, nameOf(i), shape);
    else if (i === turns[0]) {
      const share = { ...shape, windowMs: shape.windowMs / rounds };
      for (let round = 0; round < rounds; round++) {
        const order = turns.map((_, k) => turns[(k + round) % turns.length]);
        for (const j of order) rows[j] = mergeRounds(rows[j], await measureContended(targets[j], gw, nameOf(j), share));
      }
    }
  }
  return rows;
}

function mergeRounds(before: ContendedRow | undefined, round: ContendedRow): ContendedRow {
  if (!before) return round;
  const total = before.total + round.total;
  const windowMs = before.windowMs + round.windowMs;
  const perGrant = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : (a * before.total + b * round.total) / total);
  return {
    ...before,
    grantsPerSec: (before.grantsPerSec * before.windowMs + round.grantsPerSec * round.windowMs) / windowMs,
    waits: [...before.waits, ...round.waits],
    httpPerGrant: perGrant(before.httpPerGrant, round.httpPerGrant) as number,
    upstashPerGrant: perGrant(before.upstashPerGrant, round.upstashPerGrant),
    scriptsPerGrant: perGrant(before.scriptsPerGrant, round.scriptsPerGrant),
    gaveUp: before.gaveUp + round.gaveUp,
    perClient: before.perClient.map((n, i) => n + (round.perClient[i] ?? 0)),
    total,
    windowMs,
    note: before.note ?? round.note,
  };
}

export const CONTENDED_HEADER = [
  "client",
  "mode",
  "grants/s",
  "of 1000/hold",
  "max/min",
  "wait p50 ms",
  "wait p99 ms",
  "HTTP/grant",
  "Upstash/grant",
  "scripts/grant",
  "gave up",
  "per client min..max",
];

export function contendedTableRows(rows: ContendedRow[]): string[][] {
  return rows.map((r) => {
    const min = Math.min(...r.perClient);
    const max = Math.max(...r.perClient);
    return [
      r.label,
      r.settings,
      int(r.grantsPerSec),
      // A hold of H ms caps any lock at 1000/H grants per second.
      r.holdMs ? `${Math.round((100 * r.grantsPerSec * r.holdMs) / 1000)}%` : "—",
      min > 0 ? ratio(max / min) : "∞",
      ms(percentile(r.waits, 50)),
      ms(percentile(r.waits, 99)),
      ratio(r.httpPerGrant),
      ratio(r.upstashPerGrant),
      ratio(r.scriptsPerGrant),
      String(r.gaveUp),
      `${min}..${max}`,
    ];
  });
}
