/**
 * Floors, to read the other rows against: what one plain request costs on
 * this box before any lock logic, measured in the same run. Node -> gateway
 * PING (one Upstash round trip); a 404 from each served Worker (routing only,
 * no store); GET /healthz on the Redis-store Worker (one PING subrequest from
 * inside workerd to the gateway).
 */
import { runLoops } from "./loop";
import { rawFetch } from "./roundTrips";
import type { Gateway } from "./stack";
import { ms, percentile } from "./stats";

export interface Floor {
  p50: number;
  p99: number;
}

export interface Floors {
  gatewayPing: Floor;
  worker404: { redis: Floor; durable: Floor };
  workerHealthRedis: Floor;
}

/** Sequential requests (one in flight, as the cycle and handoff rows see them), after a warm-up. */
async function floorOf(fn: () => Promise<unknown>): Promise<Floor> {
  for (let i = 0; i < 20; i++) await fn();
  const r = await runLoops(1, { ms: 1000, max: 300 }, async () => void (await fn()));
  if (r.errors) throw new Error(r.firstError);
  return { p50: percentile(r.durations, 50), p99: percentile(r.durations, 99) };
}

export async function measureFloors(gw: Gateway, workers: { redis: string; durable: string }): Promise<Floors> {
  const text = async (res: Promise<Response>) => (await res).text();
  const notFound = (base: string) => async () => {
    const res = await rawFetch(`${base}/bench-floor-404`);
    if (res.status !== 404) throw new Error(`${base}/bench-floor-404 answered ${res.status}, expected 404`);
    return res.text();
  };
  return {
    gatewayPing: await floorOf(() => text(rawFetch(gw.url, { method: "POST", headers: { authorization: `Bearer ${gw.token}` }, body: '["PING"]' }))),
    worker404: { redis: await floorOf(notFound(workers.redis)), durable: await floorOf(notFound(workers.durable)) },
    workerHealthRedis: await floorOf(async () => {
      const res = await rawFetch(`${workers.redis}/healthz`);
      if (!res.ok) throw new Error(`healthz ${res.status}`);
      return res.text();
    }),
  };
}

export const FLOOR_HEADER = ["floor", "p50 ms", "p99 ms", "rate/s"];

export function floorTableRows(f: Floors): string[][] {
  const row = (label: string, x: Floor) => [label, ms(x.p50), ms(x.p99), "—"];
  return [
    row("Node -> gateway PING (one Upstash round trip)", f.gatewayPing),
    row("Worker, Redis store: GET 404 (no store)", f.worker404.redis),
    row("Worker, Durable store: GET 404 (no store)", f.worker404.durable),
    row("Worker, Redis store: GET /healthz (1 PING subrequest)", f.workerHealthRedis),
  ];
}
