import { describe, expect, it } from "vitest";
import { api, KEY_ADMIN, uniqueName } from "./support/api";

/**
 * Analytics Engine metrics (src/http/metrics.ts). The dataset here is a
 * recording stand-in: workerd's local Analytics Engine keeps nothing a test
 * could read back, so the points the Worker writes are captured instead.
 */
function recordingDataset() {
  const points: Array<{ indexes?: string[]; blobs?: string[]; doubles?: number[] }> = [];
  return { points, writeDataPoint: (p: (typeof points)[number]) => void points.push(p) };
}

describe("metrics (Workers Analytics Engine)", () => {
  for (const kind of ["redis", "durable"] as const) {
    it(`${kind} store: grants with their wait, busy answers, lease_lost and force releases, per namespace and kind`, async () => {
      const dataset = recordingDataset();
      const { post } = api(kind, { METRICS: dataset });
      const name = uniqueName("metrics");
      const held = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 400 })).body;
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
      // The waited grant's time is its wait: the first lease had about 400 ms left.
      expect(dataset.points[2].doubles?.[1]).toBeGreaterThan(150);
      expect(dataset.points.every((p) => p.doubles?.[0] === 1)).toBe(true);
    });
  }
});
