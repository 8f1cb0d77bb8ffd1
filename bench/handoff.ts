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
import { libraryLock, type Release, sdkAcquire, sdkCampaign, upstashLock, type UpstashRetry, type WorkerApi } from "./clients";
import { sleep, until, withTimeout } from "./loop";
import { answeredFrom, requestsTo } from "./roundTrips";
import type { Floors } from "./floor";
import { clockedApi, clockedWebSocket, type SocketClock } from "./socketClock";
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
  /** Socket clients: when their messages came and went (after the release is sent, the waiter's `granted` and `held` are the only ones). */
  clock?: SocketClock;
  /** Measured in alternating rounds with the other targets that say so (measureHandoffs), for a fair ratio between them. */
  takesTurns?: boolean;
}

/** The label of the relay's row (bench/relayWorker: the socket handoff's floor, no holdfast code). */
export const RELAY_LABEL = "relay DO (no holdfast code), Durable";

/** The SDK rows' label and mode (issue 38: within 10 % of the raw socket rows). */
export const sdkLabel = (store: "Redis" | "Durable") => `holdfast SDK (HoldfastClient), ${store} store`;
export const SDK_SETTINGS = `wait socket kept, heartbeat and release on it, waitMs ${WAIT_MS}`;

/**
 * Every target; with `relay` (the relay Worker, driven by the same socket client) also the relay's
 * floor row. The holdfast socket rows, the SDK's and the relay's take turns.
 */
export function handoffTargets(
  gw: Gateway,
  redis: Redis,
  workers: { redis: WorkerApi; durable: WorkerApi },
  floors: Floors,
  relay?: WorkerApi,
): HandoffTarget[] {
  const worker = (label: string, plainApi: WorkerApi, floorP50: number, channel: "HTTP" | "socket"): HandoffTarget => {
    const clocked = channel === "socket" ? clockedApi(plainApi) : undefined;
    const api = clocked?.api ?? plainApi;
    return {
      ...workerTarget(label, api, floorP50, channel),
      ...(clocked && { clock: clocked.clock, takesTurns: true }),
    };
  };
  // The SDK: client.lock() waits on a wait socket and the lease keeps it (release over it), as the raw socket rows do.
  const sdk = (store: "Redis" | "Durable", api: WorkerApi, floorP50: number): HandoffTarget => {
    const clocked = clockedWebSocket();
    const client = api.sdk(clocked.WebSocket);
    return {
      label: sdkLabel(store),
      settings: SDK_SETTINGS,
      origin: api.base,
      floorP50,
      releaseRequests: 0,
      hold: async (name) => (await sdkAcquire(client, name, WAIT_MS))!,
      wait: (name) => sdkAcquire(client, name, WAIT_MS),
      untilWaiting: (name) => until(async () => (await api.waiters(name)) >= 1, 5000, "the waiter to be queued"),
      clock: clocked.clock,
      takesTurns: true,
    };
  };
  // An election (issue 55): client.campaign() waits on a wait socket, the leadership keeps it, resign over it.
  const sdkElection = (store: "Redis" | "Durable", api: WorkerApi, floorP50: number): HandoffTarget => {
    const clocked = clockedWebSocket();
    const client = api.sdk(clocked.WebSocket);
    return {
      label: `holdfast SDK campaign after a resign (election), ${store} store`,
      settings: SDK_SETTINGS,
      origin: api.base,
      floorP50,
      releaseRequests: 0,
      hold: async (name) => (await sdkCampaign(client, name, WAIT_MS))!,
      wait: (name) => sdkCampaign(client, name, WAIT_MS),
      untilWaiting: (name) => until(async () => (await api.waiters(name, "/v1/elections")) >= 1, 5000, "the campaign to be in line"),
      clock: clocked.clock,
      takesTurns: true,
    };
  };
  const workerTarget = (label: string, api: WorkerApi, floorP50: number, channel: "HTTP" | "socket"): HandoffTarget => ({
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
    sdk("Redis", workers.redis, floors.worker404.redis.p50),
    sdk("Durable", workers.durable, floors.worker404.durable.p50),
    sdkElection("Redis", workers.redis, floors.worker404.redis.p50),
    sdkElection("Durable", workers.durable, floors.worker404.durable.p50),
    // Its floor column is "—": table 0 has no plain request to the relay.
    ...(relay ? [worker(RELAY_LABEL, relay, Number.NaN, "socket")] : []),
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
  /** Release sent -> the waiter's `granted` message (socket rows; `summary` is to `held`, when the waiter may act). */
  toGranted?: Summary;
  /** Socket rows: the client's own time per handoff, release() -> its frame sent + `held` in -> acquire resolved (socketClock.ts). */
  clientTime?: Summary;
  /** The handoffs (ms), to merge rounds. */
  samples: number[];
  grantedSamples: number[];
  clientSamples: number[];
  gaveUp: number;
  attempts: number;
  waiterRequests: number;
  note?: string;
}

export async function measureHandoff(target: HandoffTarget, name: string, bounds: { count: number; ms: number }): Promise<HandoffRow> {
  const latencies: number[] = [];
  const toGranted: number[] = [];
  const clientTime: number[] = [];
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
      const clock = target.clock;
      if (clock && clock.grantedAt() > t0) toGranted.push(clock.grantedAt() - t0);
      if (clock && clock.releaseSentAt() >= t0 && clock.heldAt() > t0) clientTime.push(clock.releaseSentAt() - t0 + (t1 - clock.heldAt()));
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
    toGranted: target.clock ? summarize(toGranted) : undefined,
    clientTime: target.clock ? summarize(clientTime) : undefined,
    samples: latencies,
    grantedSamples: toGranted,
    clientSamples: clientTime,
    gaveUp,
    attempts,
    waiterRequests: latencies.length ? waiterRequests / latencies.length : NaN,
    note,
  };
}

/**
 * Each target's row, in the targets' order. Those that take turns (the holdfast socket rows, the SDK's
 * and the relay's) run in `rounds` alternating rounds, each with its share of the bounds, and each going first in
 * turn: a machine that slows down mid-run slows them all. Their rows merge their rounds' handoffs.
 */
export async function measureHandoffs(
  targets: HandoffTarget[],
  nameOf: (index: number) => string,
  bounds: { count: number; ms: number },
  rounds: number,
): Promise<HandoffRow[]> {
  const rows: HandoffRow[] = [];
  const turns = targets.flatMap((t, i) => (t.takesTurns ? [i] : []));
  for (const [i, target] of targets.entries()) {
    if (!target.takesTurns) rows[i] = await measureHandoff(target, nameOf(i), bounds);
    else if (i === turns[0]) {
      const share = { count: Math.ceil(bounds.count / rounds), ms: bounds.ms / rounds };
      for (let round = 0; round < rounds; round++) {
        const order = turns.map((_, k) => turns[(k + round) % turns.length]);
        for (const j of order) rows[j] = mergeRounds(rows[j], await measureHandoff(targets[j], nameOf(j), share));
      }
    }
  }
  return rows;
}

function mergeRounds(before: HandoffRow | undefined, round: HandoffRow): HandoffRow {
  if (!before) return round;
  const samples = [...before.samples, ...round.samples];
  const grantedSamples = [...before.grantedSamples, ...round.grantedSamples];
  const clientSamples = [...before.clientSamples, ...round.clientSamples];
  const n = (r: HandoffRow) => (r.samples.length ? r.samples.length * r.waiterRequests : 0);
  return {
    ...before,
    summary: summarize(samples),
    toGranted: before.toGranted && summarize(grantedSamples),
    clientTime: before.clientTime && summarize(clientSamples),
    samples,
    grantedSamples,
    clientSamples,
    gaveUp: before.gaveUp + round.gaveUp,
    attempts: before.attempts + round.attempts,
    waiterRequests: samples.length ? (n(before) + n(round)) / samples.length : Number.NaN,
    note: before.note ?? round.note,
  };
}

export const HANDOFF_HEADER = [
  "client",
  "mode",
  "n",
  "p50 ms",
  "p99 ms",
  "mean ms",
  "max ms",
  "floor p50 ms",
  "gave up",
  "waiter req",
  "granted p50 ms",
  "granted p99 ms",
];

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
    ms(r.toGranted?.p50 ?? Number.NaN),
    ms(r.toGranted?.p99 ?? Number.NaN),
  ]);
}
