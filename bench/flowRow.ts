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
 *   npx tsx bench/flowRow.ts            (FLOW_ROW_MS=10000 for a shorter run)
 */
import { Ratelimit } from "@upstash/ratelimit";
import { Semaphore } from "../src/index";
import { overRate } from "../test/kinds/flow/windows";
import { upstashRedis } from "./clients";
import { type Gateway, startBenchStack } from "./stack";
import { ms, summarize } from "./stats";

const CLIENTS = 32;
const LIMIT = { concurrency: 4, rate: { count: 20, perMs: 1000 } };
const CALL_MS = 100;
const RUN_MS = Number(process.env.FLOW_ROW_MS ?? 30_000);

interface Grant {
  token: string;
  fence: number;
  startedAt: number;
}

async function row(baseUrl: string, apiKey: string, store: string) {
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
  const other: string[] = [];
  const until = Date.now() + RUN_MS;
  const client = async (i: number) => {
    while (Date.now() < until) {
      const sent = performance.now();
      const r = await call("acquire", { ...LIMIT, ttlMs: 10_000, waitMs: 30_000 });
      if (r.status !== 200) {
        other.push(`${r.status} ${r.body.error}`);
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
  const wait = summarize(waits);
  const rate = grants.length / seconds;
  console.log(
    `| ${store} | ${grants.length} | ${overRate(starts, LIMIT.rate).length} | ${most} (N ${LIMIT.concurrency}) | ${fencesRise ? "yes" : "NO"} | ${rate.toFixed(1)}/s (${(rate / LIMIT.rate.count).toFixed(2)} R) | ${Math.max(...perClient)}/${Math.min(...perClient)} = ${(Math.max(...perClient) / Math.max(1, Math.min(...perClient))).toFixed(2)} | ${ms(wait.p50)} / ${ms(wait.p99)} | ${other.length} |`,
  );
}

/** The same 32 clients with what a user can put together today: a semaphore for concurrency, then @upstash/ratelimit for the rate. */
async function nearestToday(gateway: Gateway) {
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
  const until = Date.now() + RUN_MS;
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
  const wait = summarize(waits);
  const rate = starts.length / seconds;
  console.log(
    `| Semaphore + @upstash/ratelimit (Redis) | ${starts.length} | ${overRate(starts, LIMIT.rate).length} | ${most} (N ${LIMIT.concurrency}) | no fence per start | ${rate.toFixed(1)}/s (${(rate / LIMIT.rate.count).toFixed(2)} R) | ${Math.max(...perClient)}/${Math.min(...perClient)} = ${(Math.max(...perClient) / Math.max(1, Math.min(...perClient))).toFixed(2)} | ${ms(wait.p50)} / ${ms(wait.p99)} | ${other} |`,
  );
}

async function main() {
  const stack = await startBenchStack();
  try {
    console.log(
      `flow limit: ${CLIENTS} clients, concurrency ${LIMIT.concurrency}, rate ${LIMIT.rate.count} per ${LIMIT.rate.perMs} ms, calls of ${CALL_MS} ms, ${RUN_MS / 1000} s per store`,
    );
    console.log(
      "| store | grants | 1 s windows over R | most at once | fences rise | start rate | busiest/least busy client | wait p50 / p99 ms | other answers |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|");
    await row(stack.workers.redis, stack.apiKey, "redis");
    await row(stack.workers.durable, stack.apiKey, "durable");
    await nearestToday(stack.gateway);
  } finally {
    await stack.stop();
  }
}

void main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
