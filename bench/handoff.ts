/**
 * Figure 2: handoff latency, from just before the holder's release is sent
 * to the moment the waiting client's acquire resolves.
 *
 * Each handoff: the holder takes the lock; a waiter starts acquiring with a
 * long wait; once the waiter is known to be waiting (the Worker's GET reports
 * waiters >= 1; a polling client has had its first "busy" answer) and a
 * random hold of HOLD_MIN..HOLD_MAX ms since the waiter started has passed,
 * the holder releases. A hold drawn at random keeps the release out of step
 * with a polling client's retry timer, as in real use.
 */
import type { Redis } from "@upstash/redis";
import { libraryLock, type Release, upstashLock, type UpstashRetry, type WorkerApi } from "./clients";
import { sleep, until, withTimeout } from "./loop";
import { answeredFrom, requestsTo } from "./roundTrips";
import type { Floors } from "./floor";
import type { Gateway } from "./stack";
import { ms, ratio, summarize, type Summary } from "./stats";

export const HOLD_MIN_MS = 10;
export const HOLD_MAX_MS = 210;
export const WAIT_MS = 10_000;

export interface HandoffTarget {
  label: string;
  settings: string;
  /** Origin of the waiter's (and the holder's) requests, to count the waiter's. */
  origin: string;
  /** p50 of one plain request to the same origin (see floor.ts): the least a handoff can take. */
  floorP50: number;
  hold(name: string): Promise<Release>;
  wait(name: string): Promise<Release | null>;
  /** HTTP requests the holder's release sends (0: it goes over the holder's socket). */
  releaseRequests?: number;
  /** Resolves once the waiter is waiting; `answeredBefore` = answers from origin before the waiter started. */
  untilWaiting(name: string, answeredBefore: number): Promise<void>;
}

export function handoffTargets(gw: Gateway, redis: Redis, workers: { redis: WorkerApi; durable: WorkerApi }, floors: Floors): HandoffTarget[] {
  const worker = (label: string, api: WorkerApi, floorP50: number, channel: "HTTP" | "socket"): HandoffTarget => ({
    label,
    settings: `${channel === "HTTP" ? "HTTP long-poll" : "wait socket, release on it"}, waitMs ${WAIT_MS}`,
    origin: api.base,
    floorP50,
    releaseRequests: channel === "HTTP" ? 1 : 0,
    // A socket holder releases over its socket: the lock object hands the lock on itself.
    hold: async (name) => (channel === "HTTP" ? await api.acquire(name) : await api.socketAcquire(name, WAIT_MS))!,
    wait: (name) => (channel === "HTTP" ? api.acquire(name, WAIT_MS) : api.socketAcquire(name, WAIT_MS)),
    untilWaiting: (name) => until(async () => (await api.waiters(name)) >= 1, 5000, "the waiter to be queued"),
  });
  const polled = (label: string, settings: string, waiter: (name: string) => () => Promise<Release | null>): HandoffTarget => ({
    label,
    settings,
    origin: gw.url,
    floorP50: floors.gatewayPing.p50,
    hold: async (name) => (await libraryLock(redis, name).acquire(0))!,
    wait: (name) => waiter(name)(),
    untilWaiting: (_name, before) => until(() => answeredFrom(gw.url) > before, 5000, "the waiter's first try"),
  });
  const ul = (retry?: UpstashRetry) => (name: string) => {
    const lock = upstashLock(redis, name, retry);
    return () => lock.acquire();
  };
  return [
    worker("holdfast Worker API, Redis store", workers.redis, floors.worker404.redis.p50, "HTTP"),
    worker("holdfast Worker API, Redis store", workers.redis, floors.worker404.redis.p50, "socket"),
    worker("holdfast Worker API, Durable store", workers.durable, floors.worker404.durable.p50, "HTTP"),
    worker("holdfast Worker API, Durable store", workers.durable, floors.worker404.durable.p50, "socket"),
    polled("holdfast Mutex (library)", `waitMs ${WAIT_MS}, backoff 25ms..1s jittered`, (name) => {
      const lock = libraryLock(redis, name);
      return () => lock.acquire(WAIT_MS);
    }),
    { ...polled("@upstash/lock", "retry 100 x 50 ms", ul({ attempts: 100, delay: 50 })), hold: ulHold(redis) },
    { ...polled("@upstash/lock", "default retry (3 x 100 ms)", ul()), hold: ulHold(redis) },
  ];
}

/** @upstash/lock's holder uses @upstash/lock too (same key scheme as its waiter). */
function ulHold(redis: Redis) {
  return async (name: string) => (await upstashLock(redis, name).acquire())!;
}

export interface HandoffRow {
  label: string;
  settings: string;
  floorP50: number;
  summary: Summary;
  gaveUp: number;
  attempts: number;
  waiterRequests: number;
  note?: string;
}

export async function measureHandoff(target: HandoffTarget, name: string, bounds: { count: number; ms: number }): Promise<HandoffRow> {
  const latencies: number[] = [];
  let gaveUp = 0;
  let attempts = 0;
  let waiterRequests = 0;
  let note: string | undefined;
  const stopAt = performance.now() + bounds.ms;
  // One warm-up handoff-free cycle: connections, isolates, lock object and scripts.
  await (await target.hold(name))();

  while (attempts < bounds.count && performance.now() < stopAt) {
    attempts++;
    let release: Release | undefined;
    let waiting: Promise<Release | null> | undefined;
    try {
      release = await target.hold(name);
      const answeredBefore = answeredFrom(target.origin);
      const sentBefore = requestsTo(target.origin);
      const holdMs = HOLD_MIN_MS + Math.random() * (HOLD_MAX_MS - HOLD_MIN_MS);
      const started = performance.now();
      let t1 = 0;
      let sentAtGrant = 0;
      waiting = target.wait(name).then((r) => {
        t1 = performance.now();
        sentAtGrant = requestsTo(target.origin);
        return r;
      });
      waiting.catch(() => {}); // awaited below; never an unhandled rejection meanwhile
      await target.untilWaiting(name, answeredBefore);
      const left = started + holdMs - performance.now();
      if (left > 0) await sleep(left);
      const t0 = performance.now();
      const r = release;
      release = undefined;
      await r();
      const granted = await withTimeout(waiting, WAIT_MS + 5000, "the waiter");
      waiting = undefined;
      if (!granted) {
        gaveUp++;
        continue;
      }
      latencies.push(t1 - t0);
      waiterRequests += sentAtGrant - sentBefore - (target.releaseRequests ?? 1); // minus the holder's release
      await granted();
    } catch (err) {
      note ??= err instanceof Error ? err.message : String(err);
      if (release) await release().catch(() => {});
      if (waiting)
        await withTimeout(waiting, WAIT_MS + 5000, "the waiter").then(
          (g) => g?.(),
          () => {},
        );
      if (attempts > 5 && !latencies.length) break;
    }
  }
  return {
    label: target.label,
    settings: target.settings,
    floorP50: target.floorP50,
    summary: summarize(latencies),
    gaveUp,
    attempts,
    waiterRequests: latencies.length ? waiterRequests / latencies.length : NaN,
    note,
  };
}

export const HANDOFF_HEADER = ["client", "mode", "n", "p50 ms", "p99 ms", "mean ms", "max ms", "floor p50 ms", "gave up", "waiter req"];

export function handoffTableRows(rows: HandoffRow[]): string[][] {
  return rows.map((r) => [
    r.label,
    r.settings,
    String(r.summary.n),
    ms(r.summary.p50),
    ms(r.summary.p99),
    ms(r.summary.mean),
    ms(r.summary.max),
    ms(r.floorP50),
    `${r.gaveUp}/${r.attempts}`,
    ratio(r.waiterRequests, 1),
  ]);
}
