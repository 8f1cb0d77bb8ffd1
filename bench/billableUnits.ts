/**
 * 11. What a lock costs: the units Cloudflare and Upstash bill, per operation,
 * counted on the local stack (`BENCH_ONLY=11 npm run bench`), and what a
 * million of each costs at the prices docs/performance.md quotes (with their
 * sources and the date they were read).
 *
 * Counted, not estimated: the service runs as bench/unitsWorker (src/worker.ts
 * with a counter beside each billed call: Worker requests, Durable Object
 * requests, incoming WebSocket messages, rows read and written by Cloudflare's
 * rule for the key-value API, setAlarm, alarm invocations, Upstash commands);
 * the library and @upstash/lock run in this process, their Upstash commands
 * counted at fetch. The bare Durable Object lock (bench/cycleFloorWorker's
 * FloorLock: one get and one put to acquire, one get and one delete to
 * release) is counted from its code by the same rule.
 */
import path from "node:path";
import { Lock } from "@upstash/lock";
import { Idempotency, Mutex } from "../src/index";
import { upstashRedis } from "./clients";
import { rawFetch } from "./roundTrips";
import { ROOT, type Gateway } from "./stack";
import { printTable } from "./table";
import { startWorkerServer, type WorkerServer } from "../tools/serve-worker/serve.mjs";

/** What one operation is billed, each unit a count per operation. */
export interface Units {
  workerRequests: number;
  objectRequests: number;
  wsMessagesIn: number;
  rowsRead: number;
  rowsWritten: number;
  setAlarms: number;
  alarms: number;
  upstashCommands: number;
}

/**
 * Published prices, USD, per unit past each plan's monthly inclusion (read 2026-11-29; sources in
 * docs/performance.md, "What a lock costs"): Workers Standard, Durable Objects (SQLite storage), Upstash
 * Redis pay-as-you-go. A setAlarm is billed as a row written, counted there.
 */
export const PRICE = {
  workerRequest: 0.3 / 1e6,
  objectRequest: 0.15 / 1e6,
  rowRead: 0.001 / 1e6,
  rowWritten: 1.0 / 1e6,
  upstashCommand: 0.2 / 1e5,
} as const;

/** USD per million operations of these units (incoming WebSocket messages at 20 to a request). */
export function perMillion(u: Units): number {
  const objectRequests = u.objectRequests + u.wsMessagesIn / 20;
  const usd =
    u.workerRequests * PRICE.workerRequest +
    objectRequests * PRICE.objectRequest +
    u.rowsRead * PRICE.rowRead +
    u.rowsWritten * PRICE.rowWritten +
    u.upstashCommands * PRICE.upstashCommand;
  return usd * 1e6;
}

const NONE: Units = {
  workerRequests: 0,
  objectRequests: 0,
  wsMessagesIn: 0,
  rowsRead: 0,
  rowsWritten: 0,
  setAlarms: 0,
  alarms: 0,
  upstashCommands: 0,
};

interface Row {
  what: string;
  op: "cycle" | "heartbeat" | "idempotent";
  units: Units;
}

/** The counts of a units Worker, per operation over `n`. */
class CountedWorker {
  constructor(
    readonly server: WorkerServer,
    private readonly key: string,
  ) {}

  async reset(): Promise<void> {
    await rawFetch(`${this.server.url}/__units/reset`, { method: "POST" });
  }

  async per(n: number): Promise<Units> {
    const all = (await (await rawFetch(`${this.server.url}/__units`)).json()) as Units;
    return Object.fromEntries(Object.keys(NONE).map((k) => [k, all[k as keyof Units] / n])) as unknown as Units;
  }

  async post(path: string, body: unknown): Promise<Record<string, unknown>> {
    const res = await rawFetch(`${this.server.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(answer)}`);
    return answer;
  }
}

/** Counts the Upstash commands `fn` sends from this process (a script call one, a pipeline one per command). */
async function commandsOf(gw: Gateway, fn: () => Promise<void>): Promise<number> {
  const before = globalThis.fetch;
  let commands = 0;
  globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (url.startsWith(gw.url)) {
      const pipeline = /\/(pipeline|multi-exec)$/.test(new URL(url).pathname);
      commands += pipeline ? (JSON.parse(String(init?.body ?? "[]")) as unknown[]).length : 1;
    }
    return before(input, init);
  }) as typeof fetch;
  try {
    await fn();
  } finally {
    globalThis.fetch = before;
  }
  return commands;
}

const only = (u: Partial<Units>): Units => ({ ...NONE, ...u });

/** The service's rows: an uncontended acquire + release on one lock and on a new lock each time, a heartbeat, an idempotent request. */
async function serviceRows(store: "Durable" | "Redis", w: CountedWorker, run: string, n: number): Promise<Row[]> {
  const rows: Row[] = [];
  const cycle = async (name: string) => {
    const { token } = await w.post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 });
    await w.post(`/v1/locks/${name}/release`, { token });
  };
  // Each loop after one of its own kind: scripts loaded, the reused lock's object made, as every later call finds them.
  await cycle(`${run}-one`);
  await w.reset();
  for (let i = 0; i < n; i++) await cycle(`${run}-one`);
  rows.push({ what: `service, ${store} store: the same lock`, op: "cycle", units: await w.per(n) });
  await w.reset();
  for (let i = 0; i < n; i++) await cycle(`${run}-new-${i}`);
  rows.push({ what: `service, ${store} store: a new lock each time`, op: "cycle", units: await w.per(n) });

  const { token } = await w.post(`/v1/locks/${run}-hb/acquire`, { ttlMs: 30_000 });
  await w.post(`/v1/locks/${run}-hb/heartbeat`, { token, ttlMs: 30_000 });
  await w.reset();
  for (let i = 0; i < n; i++) await w.post(`/v1/locks/${run}-hb/heartbeat`, { token, ttlMs: 30_000 });
  rows.push({ what: `service, ${store} store`, op: "heartbeat", units: await w.per(n) });
  await w.post(`/v1/locks/${run}-hb/release`, { token });

  const idempotent = async (key: string) => {
    const begun = await w.post(`/v1/idempotency/${key}/begin`, { ttlMs: 30_000 });
    await w.post(`/v1/idempotency/${key}/complete`, { token: begun.token, response: { status: 200, body: "ok" } });
  };
  await idempotent(`${run}-key-warm`);
  await w.reset();
  for (let i = 0; i < n; i++) await idempotent(`${run}-key-${i}`);
  rows.push({ what: `service, ${store} store: begin + complete`, op: "idempotent", units: await w.per(n) });
  return rows;
}

/** The library's and @upstash/lock's rows: Upstash commands only (no Worker, no object). */
async function libraryRows(gw: Gateway, run: string, n: number): Promise<Row[]> {
  const redis = upstashRedis(gw);
  const per = (commands: number) => only({ upstashCommands: commands / n });
  const mutex = new Mutex(redis, `${run}-lib`, { namespace: "bench" });
  await mutex.release((await mutex.acquire({ ttlMs: 30_000 })).token); // scripts loaded
  const libCycle = await commandsOf(gw, async () => {
    for (let i = 0; i < n; i++) await mutex.release((await mutex.acquire({ ttlMs: 30_000 })).token);
  });
  const held = await mutex.acquire({ ttlMs: 30_000 });
  const libHeartbeat = await commandsOf(gw, async () => {
    for (let i = 0; i < n; i++) await mutex.heartbeat(held.token, 30_000);
  });
  await mutex.release(held.token);
  const idem = new Idempotency(redis, { namespace: "bench" });
  const libIdempotent = await commandsOf(gw, async () => {
    for (let i = 0; i < n; i++) {
      const begun = await idem.begin(`${run}-lib-key-${i}`, { ttlMs: 30_000 });
      if (begun.state !== "started") throw new Error("a fresh key was not started");
      await idem.complete(`${run}-lib-key-${i}`, begun.token, { status: 200, body: "ok" });
    }
  });

  const upstash = new Lock({ id: `${run}-ul`, redis, lease: 30_000 });
  const ulCycle = await commandsOf(gw, async () => {
    for (let i = 0; i < n; i++) {
      if (!(await upstash.acquire())) throw new Error("@upstash/lock: not acquired");
      await upstash.release();
    }
  });
  await upstash.acquire();
  const ulExtend = await commandsOf(gw, async () => {
    for (let i = 0; i < n; i++) await upstash.extend(30_000);
  });
  await upstash.release();
  return [
    { what: "library (Redis)", op: "cycle", units: per(libCycle) },
    { what: "@upstash/lock", op: "cycle", units: per(ulCycle) },
    { what: "library (Redis)", op: "heartbeat", units: per(libHeartbeat) },
    { what: "@upstash/lock: extend()", op: "heartbeat", units: per(ulExtend) },
    { what: "library (Redis): begin + complete", op: "idempotent", units: per(libIdempotent) },
  ];
}

/** The floors, counted from bench/cycleFloorWorker's code by the same rules. */
const FLOOR_ROWS: Row[] = [
  { what: "bare Durable Object lock (floor)", op: "cycle", units: only({ workerRequests: 2, objectRequests: 2, rowsRead: 2, rowsWritten: 2 }) },
  { what: "bare Worker + one script each (floor)", op: "cycle", units: only({ workerRequests: 2, upstashCommands: 2 }) },
  { what: "bare Durable Object lock (floor)", op: "heartbeat", units: only({ workerRequests: 1, objectRequests: 1, rowsRead: 1, rowsWritten: 1 }) },
];

const f = (x: number) => (x === 0 ? "0" : Number.isInteger(x) ? String(x) : x.toFixed(2));

export async function billableUnitsSection(gw: Gateway, run: string, quick: boolean): Promise<void> {
  const n = quick ? 20 : 100;
  const key = "units-bench-key-0123456789";
  const vars = { API_KEYS: `bench=${key}` };
  const projectDir = path.join(ROOT, "bench/unitsWorker");
  const [durable, redis] = await Promise.all([
    startWorkerServer({ vars, projectDir }),
    startWorkerServer({ vars: { ...vars, UPSTASH_REDIS_REST_URL: gw.url, UPSTASH_REDIS_REST_TOKEN: gw.token }, projectDir }),
  ]);
  let rows: Row[];
  try {
    rows = [
      ...(await serviceRows("Durable", new CountedWorker(durable, key), `${run}-u`, n)),
      ...(await serviceRows("Redis", new CountedWorker(redis, key), `${run}-u`, n)),
      ...(await libraryRows(gw, `${run}-u`, n)),
      ...FLOOR_ROWS,
    ];
  } finally {
    await Promise.all([durable.stop(), redis.stop()]);
  }
  const order = { cycle: 0, heartbeat: 1, idempotent: 2 };
  rows.sort((a, b) => order[a.op] - order[b.op]);
  const title = { cycle: "acquire + release", heartbeat: "heartbeat", idempotent: "idempotent request" };
  printTable(
    "11. What a lock costs: billable units per operation, and USD per million at published prices",
    ["operation", "Worker req", "DO req", "WS in", "rows read", "rows written", "setAlarm", "alarms run", "Upstash cmds", "USD / million"],
    rows.map((r) => [
      `${title[r.op]}: ${r.what}`,
      f(r.units.workerRequests),
      f(r.units.objectRequests),
      f(r.units.wsMessagesIn),
      f(r.units.rowsRead),
      f(r.units.rowsWritten),
      f(r.units.setAlarms),
      f(r.units.alarms),
      f(r.units.upstashCommands),
      `$${perMillion(r.units).toFixed(2)}`,
    ]),
    [
      `${n} uncontended operations each, one at a time, after one to warm up; counts per operation (bench/unitsWorker counts the service's,`,
      "this process the library's and @upstash/lock's Upstash commands; the floors are counted from bench/cycleFloorWorker's code).",
      "Rows by Cloudflare's rule for the key-value API on SQLite (a key read: a row read; a key written or deleted: a row written); a",
      "setAlarm is a row written (in the rows column too). Alarms run: those that fired within the run (clean-up alarms fire later).",
      "USD: past each plan's monthly inclusion, at the prices and sources in docs/performance.md (Workers $0.30/M requests, Durable",
      "Objects $0.15/M requests and WS messages at 1/20, $0.001/M rows read, $1.00/M rows written; Upstash $0.20 per 100K commands).",
      "Not in it: Worker CPU time ($0.02 per million CPU ms), Durable Object duration, storage.",
    ],
  );
}
