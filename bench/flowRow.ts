/**
 * The flow limit's row (issue 56): 32 clients on one name with N = 4 and
 * R = 20 per 1 s, each taking a slot (waiting in line over HTTP), calling a
 * resource that counts its concurrent callers for 100 ms, and giving the
 * slot back, for FLOW_ROW_MS (default 30 s) on each store. It prints what
 * the issue asks: windows of 1 s over R (over the grant times the store
 * reports), the most callers the resource saw at once, whether fences rose
 * in grant order, the achieved start rate against R, the busiest client's
 * starts against the least busy one's, and the wait p50/p99. Beside it, the
 * nearest a user has today: the library's Semaphore (4) and then
 * @upstash/ratelimit's sliding window (20 per 1 s, blockUntilReady) over the
 * same Upstash gateway, each polling; its starts are the clients' own times
 * (one process, one clock), and no fences are issued per start.
 *
 * Table 12 of `npm run bench` (`BENCH_ONLY=12 npm run bench`; FLOW_ROW_MS=10000
 * for shorter rows, --quick a quarter).
 */
import { Ratelimit } from "@upstash/ratelimit";
import { Semaphore } from "../src/index";
import { overRate } from "../test/kinds/flow/windows";
import { upstashRedis } from "./clients";
import type { BenchStack, Gateway } from "./stack";
import { ms, summarize } from "./stats";
import { printTable } from "./table";

const CLIENTS = 32;
const LIMIT = { concurrency: 4, rate: { count: 20, perMs: 1000 } };
const CALL_MS = 100;
const DEFAULT_RUN_MS = 30_000;

interface Grant {
  token: string;
  fence: number;
  startedAt: number;
}

/** One row of table 12: what one way of limiting did with the 32 clients. */
interface FlowBenchRow {
  what: string;
  starts: number;
  windowsOver: number;
  most: number;
  fences: string;
  /** Starts per second over the whole run (its last waits' drain included). */
  rate: number;
  perClient: number[];
  waits: number[];
  other: number;
}

async function holdfastRow(baseUrl: string, apiKey: string, store: string, runMs: number): Promise<FlowBenchRow> {
  const name = `flow-row-${store}-${Date.now().toString(36)}`;
  const call = async (step: string, body: unknown) => {
    const res = await fetch(`${baseUrl}/v1/flows/${name}/${step}`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Grant & { error?: string } };
  };
  let inFlight = 0;
  let most = 0;
  const grants: Grant[] = [];
  const perClient = new Array<number>(CLIENTS).fill(0);
  const waits: number[] = [];
  let other = 0;
  const until = Date.now() + runMs;
  const client = async (i: number) => {
    while (Date.now() < until) {
      const sent = performance.now();
      const r = await call("acquire", { ...LIMIT, ttlMs: 10_000, waitMs: 30_000 });
      if (r.status !== 200) {
        other += 1;
        continue;
      }
      waits.push(performance.now() - sent);
      grants.push(r.body);
      perClient[i] += 1;
      inFlight += 1; // the resource counts its concurrent callers
      most = Math.max(most, inFlight);
      await new Promise((done) => setTimeout(done, CALL_MS));
      inFlight -= 1;
      await call("release", { token: r.body.token });
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  const seconds = (Date.now() - started) / 1000;
  const starts = grants.map((g) => g.startedAt);
  const byStart = [...grants].sort((a, b) => a.startedAt - b.startedAt || a.fence - b.fence);
  const fencesRise = byStart.every((g, i) => i === 0 || g.fence > byStart[i - 1].fence);
  return {
    what: `flow limit, ${store}`,
    starts: grants.length,
    windowsOver: overRate(starts, LIMIT.rate).length,
    most,
    fences: fencesRise ? "yes" : "NO",
    rate: grants.length / seconds,
    perClient,
    waits,
    other,
  };
}

/** The same 32 clients with what a user can put together today: a semaphore for concurrency, then @upstash/ratelimit for the rate. */
async function nearestToday(gateway: Gateway, runMs: number): Promise<FlowBenchRow> {
  const redis = upstashRedis(gateway);
  const name = `flow-row-nearest-${Date.now().toString(36)}`;
  const semaphore = new Semaphore(redis, name, { limit: LIMIT.concurrency, namespace: "bench" });
  const ratelimit = new Ratelimit({ redis, limiter: Ratelimit.slidingWindow(LIMIT.rate.count, "1 s"), prefix: `bench-${name}` });
  let inFlight = 0;
  let most = 0;
  const starts: number[] = [];
  const perClient = new Array<number>(CLIENTS).fill(0);
  const waits: number[] = [];
  let other = 0;
  const until = Date.now() + runMs;
  const client = async (i: number) => {
    while (Date.now() < until) {
      const sent = performance.now();
      const grant = await semaphore.acquire({ ttlMs: 10_000, waitMs: 30_000 }).catch(() => undefined);
      if (!grant) {
        other += 1;
        continue;
      }
      const { success } = await ratelimit.blockUntilReady(name, 30_000);
      if (success) {
        waits.push(performance.now() - sent);
        starts.push(Date.now());
        perClient[i] += 1;
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((done) => setTimeout(done, CALL_MS));
        inFlight -= 1;
      } else other += 1;
      await semaphore.release(grant.token);
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  const seconds = (Date.now() - started) / 1000;
  return {
    what: "Semaphore + @upstash/ratelimit (Redis)",
    starts: starts.length,
    windowsOver: overRate(starts, LIMIT.rate).length,
    most,
    fences: "no fence per start",
    rate: starts.length / seconds,
    perClient,
    waits,
    other,
  };
}

const HEADER = [
  "",
  "starts",
  "1 s windows over R",
  "most at once",
  "fences rise",
  "start rate",
  "busiest / least busy client",
  "wait p50 / p99 ms",
  "other answers",
];

function cells(r: FlowBenchRow): string[] {
  const busiest = Math.max(...r.perClient);
  const least = Math.min(...r.perClient);
  const wait = summarize(r.waits);
  return [
    r.what,
    String(r.starts),
    String(r.windowsOver),
    `${r.most} (N ${LIMIT.concurrency})`,
    r.fences,
    `${r.rate.toFixed(1)}/s (${(r.rate / LIMIT.rate.count).toFixed(2)} R)`,
    `${busiest} / ${least}${least ? ` = ${(busiest / least).toFixed(2)}` : ""}`,
    `${ms(wait.p50)} / ${ms(wait.p99)}`,
    String(r.other),
  ];
}

/**
 * 12. A flow limit against the nearest a user has today: each row in turn, `runMs` each (default 30 s,
 * FLOW_ROW_MS sets it; a quarter with --quick).
 */
export async function flowSection(stack: BenchStack, quick: boolean): Promise<void> {
  const runMs = Number(process.env.FLOW_ROW_MS ?? DEFAULT_RUN_MS) / (quick ? 4 : 1);
  const rows = [
    await holdfastRow(stack.workers.redis, stack.apiKey, "Redis", runMs),
    await holdfastRow(stack.workers.durable, stack.apiKey, "Durable", runMs),
    await nearestToday(stack.gateway, runMs),
  ];
  printTable(
    `12. A flow limit: ${CLIENTS} clients on one name, concurrency ${LIMIT.concurrency}, ${LIMIT.rate.count} starts per ${LIMIT.rate.perMs} ms, calls of ${CALL_MS} ms, ${runMs / 1000} s a row`,
    HEADER,
    rows.map(cells),
    [
      "flow limit: each client waits in the lock object's line over HTTP (waitMs 30 s), calls a resource that counts its concurrent callers, releases;",
      "windows over R by the grant times the store reports. The pair: the library's Semaphore (4, polling), then @upstash/ratelimit's",
      "sliding window (blockUntilReady, polling) while holding the permit, on the same gateway; its starts are the clients' own times.",
      "A start rate is over the whole row, its last waits' drain included. docs/flow-limits.md reads the figures.",
    ],
  );
}
