import { describe, expect, it } from "vitest";
import { sharedRedis, unique } from "../support/library";
import { ConflictError, FlowLimit, InvalidInputError, LockedError } from "holdfast";
import { overRate } from "../kinds/flow/windows";

/**
 * The flow limit as an app uses it: `import { FlowLimit } from "holdfast"`
 * over a real @upstash/redis client, against a real redis-server behind the
 * project's Upstash gateway (see mutex.test.ts). Its waits poll the store.
 */
describe("FlowLimit over @upstash/redis", () => {
  it("holds to its rate: past it a try is LockedError, and a wait is granted when the window admits one, with no release", async () => {
    const flow = new FlowLimit(sharedRedis(), unique("rate"), { concurrency: 5, rate: { count: 2, perMs: 1500 } });
    const starts = [(await flow.acquire({ ttlMs: 10_000 })).startedAt, (await flow.acquire({ ttlMs: 10_000 })).startedAt];
    const err = await flow.acquire({ ttlMs: 10_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(LockedError);
    expect(err.retryAfterMs).toBeGreaterThan(0);
    expect(err.retryAfterMs).toBeLessThanOrEqual(1500);
    const third = await flow.acquire({ ttlMs: 10_000, waitMs: 5000 });
    starts.push(third.startedAt);
    expect(third.held).toBe(3);
    expect(overRate(starts, { count: 2, perMs: 1500 })).toEqual([]);
    expect(await flow.inspect()).toMatchObject({ limit: { concurrency: 5, rate: { count: 2, perMs: 1500 } }, held: 3 });
  });

  it("withSlot gives the slot back; another limit is limit_mismatch naming both; bad limits are refused before the store", async () => {
    const name = unique("slot");
    const flow = new FlowLimit(sharedRedis(), name, { concurrency: 1 });
    expect(await flow.withSlot({ ttlMs: 5000 }, async (g) => g.held)).toBe(1);
    const held = await flow.acquire({ ttlMs: 5000 });
    const other = await new FlowLimit(sharedRedis(), name, { concurrency: 2 }).acquire({ ttlMs: 5000 }).catch((e) => e);
    expect(other).toBeInstanceOf(ConflictError);
    expect(other.message).toMatch(/in force is concurrency 1, this call asked concurrency 2/);
    expect(await flow.release(held.token)).toEqual({ released: true, held: 0 });
    for (const options of [{}, { concurrency: 0 }, { rate: { count: 5, perMs: 999 } }, { rate: { count: 1.5, perMs: 1000 } }]) {
      expect(() => new FlowLimit(sharedRedis(), name, options)).toThrow(InvalidInputError);
    }
  });
});
