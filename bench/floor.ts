/**
 * Floors, to read the Worker rows against: what one plain request costs on
 * this box before any lock logic. Node -> gateway PING; a 404 from the Worker
 * (routing only, no store); GET /healthz on the Redis-store Worker (one PING
 * subrequest from inside workerd to the gateway).
 */
import { runLoops } from "./loop";
import { rawFetch } from "./roundTrips";
import type { Gateway } from "./stack";
import { percentile } from "./stats";

export interface Floors {
  gatewayPing: number;
  worker404: number;
  workerHealthRedis: number;
}

async function p50Of(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await fn();
  const r = await runLoops(1, { ms: 1000, max: 300 }, async () => void (await fn()));
  if (r.errors) throw new Error(r.firstError);
  return percentile(r.durations, 50);
}

export async function measureFloors(gw: Gateway, workers: { redis: string; durable: string }): Promise<Floors> {
  const text = async (res: Promise<Response>) => (await res).text();
  return {
    gatewayPing: await p50Of(() =>
      text(rawFetch(gw.url, { method: "POST", headers: { authorization: `Bearer ${gw.token}` }, body: '["PING"]' })),
    ),
    worker404: await p50Of(() => text(rawFetch(`${workers.durable}/bench-floor-404`))),
    workerHealthRedis: await p50Of(async () => {
      const res = await rawFetch(`${workers.redis}/healthz`);
      if (!res.ok) throw new Error(`healthz ${res.status}`);
      return res.text();
    }),
  };
}
