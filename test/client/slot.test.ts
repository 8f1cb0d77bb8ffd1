// holdfast/client's flow limits against the real service: the Worker served by workerd over real TCP,
// on both stores (docs/API.md "Flow limit").
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HoldfastClient, LockedError } from "../../src/client/index";
import { type Stores, startOnBothStores, stopAll } from "../support/workerServers";

const KEY = "client-test-key-123456";
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;

beforeAll(async () => {
  servers = await startOnBothStores({ API_KEYS: `client=${KEY}` }, { url: inject("upstashUrl"), token: inject("upstashToken") });
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
});

for (const kind of ["redis", "durable"] as const) {
  describe(`${kind} store`, () => {
    const client = () => new HoldfastClient({ baseUrl: servers[kind].url, apiKey: KEY });

    it("withSlot holds to the rate: a start past it waits for the window (no release frees it), a try is told when", async () => {
      const name = unique("slot");
      // A window long enough that the try lands inside it on a busy runner (1.5 s did not, at load 12).
      const limit = { concurrency: 5, rate: { count: 2, perMs: 4000 } };
      const ran: number[] = [];
      const run = () => client().withSlot(name, { ...limit, ttlMs: 10_000, waitMs: 10_000 }, async (lease) => ran.push(Date.now()) && lease.fence);
      const fences = [await run(), await run()];
      const tried = await client()
        .slot(name, { ...limit, ttlMs: 10_000 })
        .catch((err: unknown) => err);
      expect(tried).toBeInstanceOf(LockedError);
      expect((tried as LockedError).retryAfterMs).toBeGreaterThan(0);
      fences.push(await run());
      // The third started when the first left the window, not at once (the two before it were released).
      expect(ran[2] - ran[0]).toBeGreaterThanOrEqual(3000);
      expect(fences[2]).toBeGreaterThan(fences[1]);
      const after = await client().inspect("flow", name);
      expect(after).toMatchObject({ limit, held: 0 });
      // The third's start is in the window, and the second's unless the run was slow enough for it to leave.
      expect(after.starts).toBeGreaterThanOrEqual(1);
      expect(after.starts).toBeLessThanOrEqual(2);
    });
  });
}
