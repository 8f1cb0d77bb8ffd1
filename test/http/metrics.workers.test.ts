import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { api, KEY_ADMIN, uniqueName } from "../support/workers/api";
import { eventually, lockObject, newReceiver, runAlarmsUntilQuiet } from "../support/workers/lockObjectHelpers";
import { socketWaiter } from "../support/workers/socketWaiter";

/**
 * Analytics Engine metrics (src/http/metrics.ts). The dataset here is a
 * recording stand-in: workerd's local Analytics Engine keeps nothing a test
 * could read back, so the points the Worker writes are captured instead.
 */
function recordingDataset() {
  const points: Array<{ indexes?: string[]; blobs?: string[]; doubles?: number[] }> = [];
  return { points, writeDataPoint: (p: (typeof points)[number]) => void points.push(p) };
}

/**
 * Gives one lock object the dataset, as the platform would give it its binding, for the length of
 * `fn`, then puts back what it had: the env it is set on may be shared with other objects and files.
 */
async function withObjectDataset<T>(name: string, dataset: ReturnType<typeof recordingDataset>, fn: () => Promise<T>): Promise<T> {
  const before = await runInDurableObject(lockObject(name), (instance) => {
    const env = (instance as unknown as { env: Env }).env;
    const had = { set: "METRICS" in env, value: env.METRICS };
    env.METRICS = dataset;
    return had;
  });
  try {
    return await fn();
  } finally {
    await runInDurableObject(lockObject(name), (instance) => {
      const env = (instance as unknown as { env: Env }).env;
      if (before.set) env.METRICS = before.value;
      else delete env.METRICS;
    });
  }
}

describe("metrics (Workers Analytics Engine)", () => {
  for (const kind of ["redis", "durable"] as const) {
    it(`${kind} store: grants with their wait, busy answers, lease_lost and force releases, per namespace and kind`, async () => {
      const dataset = recordingDataset();
      const { post } = api(kind, { METRICS: dataset });
      const name = uniqueName("metrics");
      // A TTL the busy answer and the waiter's start land inside even on a busy machine.
      const held = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 1500 })).body;
      expect((await post(`/v1/locks/${name}/acquire`, { ttlMs: 1000 })).status).toBe(409);
      const waited = await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000, waitMs: 5000 }); // granted when the first lapses
      expect(waited.status).toBe(200);
      expect((await post(`/v1/locks/${name}/heartbeat`, { token: held.token })).status).toBe(409);
      await post(`/v1/semaphores/${name}/acquire`, { ttlMs: 5000, limit: 1 });
      expect((await post(`/v1/semaphores/${name}/force-release`, { reason: "metrics" }, { key: KEY_ADMIN })).status).toBe(200);
      await post(`/v1/locks/${name}/release`, { token: waited.body.token });

      const seen = dataset.points.map((p) => [p.indexes?.[0], ...(p.blobs ?? [])].join(" "));
      expect(seen).toEqual([
        "tenant-a mutex grant",
        "tenant-a mutex busy",
        "tenant-a mutex grant",
        "tenant-a mutex lease_lost",
        "tenant-a semaphore grant",
        "tenant-a semaphore force_release",
      ]);
      // The waited grant's time is its wait (the first lease had most of its 1500 ms left), not 0.
      expect(dataset.points[2].doubles?.[1]).toBeGreaterThan(150);
      expect(dataset.points.every((p) => p.doubles?.[0] === 1)).toBe(true);
    });
  }

  for (const kind of ["redis", "durable"] as const) {
    it(`${kind} store: a flow limit's refusals are counted by reason, concurrency or rate, beside its grants and busy answers`, async () => {
      const dataset = recordingDataset();
      const { post } = api(kind, { METRICS: dataset });
      const [slots, starts] = [uniqueName("metrics-slots"), uniqueName("metrics-starts")];
      expect((await post(`/v1/flows/${slots}/acquire`, { concurrency: 1, ttlMs: 5000 })).status).toBe(200);
      expect((await post(`/v1/flows/${slots}/acquire`, { concurrency: 1, ttlMs: 5000 })).status).toBe(409);
      const rate = { count: 1, perMs: 60_000 };
      const first = (await post(`/v1/flows/${starts}/acquire`, { rate, ttlMs: 5000 })).body;
      await post(`/v1/flows/${starts}/release`, { token: first.token });
      expect((await post(`/v1/flows/${starts}/acquire`, { rate, ttlMs: 5000 })).status).toBe(409);
      const seen = dataset.points.map((p) => [p.indexes?.[0], ...(p.blobs ?? [])].join(" "));
      expect(seen).toEqual([
        "tenant-a flow grant",
        "tenant-a flow busy_concurrency",
        "tenant-a flow busy",
        "tenant-a flow grant",
        "tenant-a flow busy_rate",
        "tenant-a flow busy",
      ]);
    });
  }

  for (const kind of ["redis", "durable"] as const) {
    it(`${kind} store: a watched lease that lapses is counted by its lock object`, async () => {
      const dataset = recordingDataset();
      const { post } = api(kind);
      const name = uniqueName("metrics-lapse");
      const receiver = await newReceiver();
      expect((await post(`/v1/locks/${name}/acquire`, { ttlMs: 300, onExpire: receiver.url })).status).toBe(200);
      await withObjectDataset(name, dataset, async () => {
        await eventually(
          async () => {
            await runAlarmsUntilQuiet(name, "mutex");
            return dataset.points;
          },
          (points) => points.length > 0,
        );
      });
      expect(dataset.points.map((p) => [p.indexes?.[0], ...(p.blobs ?? [])].join(" "))).toEqual(["tenant-a mutex lapse"]);
    });
  }

  it("durable store: waits over a socket are counted as HTTP ones are (the acquire flow, run in the lock object), granted (with the wait) or timed out", async () => {
    const dataset = recordingDataset();
    const { post, get } = api("durable");
    const name = uniqueName("metrics-socket");
    const held = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
    const wait = (waitMs: number) => socketWaiter(name, { ttlMs: 5000, waitMs });
    const granted = await withObjectDataset(name, dataset, async () => {
      const timedOut = await wait(200);
      await eventually(
        async () => timedOut.messages,
        (m) => m.length > 0,
      );
      expect(timedOut.messages[0].type).toBe("timeout");
      const granted = await wait(10_000);
      // In line (the object has its acquire: a busy runner delivered it late), then a wait of some length (its figure is checked, not this sleep).
      await eventually(
        async () => (await get(`/v1/locks/${name}`)).body.waiters,
        (waiters) => waiters === 1,
      );
      await new Promise((r) => setTimeout(r, 300));
      await post(`/v1/locks/${name}/release`, { token: held.token });
      await eventually(
        async () => granted.messages,
        (m) => m.length > 0,
      );
      return granted;
    });
    expect(granted.messages[0].type).toBe("granted");
    const seen = dataset.points.map((p) => [p.indexes?.[0], ...(p.blobs ?? [])].join(" "));
    expect(seen).toEqual(["tenant-a mutex busy", "tenant-a mutex grant"]);
    expect(dataset.points[1].doubles?.[1]).toBeGreaterThanOrEqual(250);
    granted.ws.close();
  });
});
