import { expect, it } from "vitest";
import { type StoreKind, uniqueName } from "../../support/workers/api.js";
import { lockApi } from "./lockApi.js";
import { eventually } from "../../support/workers/lockObjectHelpers.js";

/**
 * Lock-delay (Consul, Chubby): a lease that lapses (its holder vanished, no
 * release) keeps the lock from everyone, waiters included, for its
 * lockDelayMs after the lapse; a release has no delay. For resources that
 * cannot check fences, against a holder that was only paused.
 */
export function lockDelayConformance(kind: StoreKind) {
  const { post, get, path } = lockApi(kind);

  it("after a lapse, nobody gets the lock for its lockDelayMs: try-locks are told to come back, GET shows delayedUntil", async () => {
    const name = uniqueName("delay");
    const lapsed = (await post(path(name, "acquire"), { ttlMs: 300, lockDelayMs: 1500 })).body; // never released
    const free = await eventually(
      () => get(path(name)),
      (r) => r.body.held === false,
    );
    expect(free.body.delayedUntil).toBe(lapsed.expiresAt + 1500);
    const refused = await post(path(name, "acquire"), { ttlMs: 1000 });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe("locked");
    expect(refused.body.retryAfterMs).toBeGreaterThan(0);
    expect(refused.body.retryAfterMs).toBeLessThanOrEqual(1500);
    // Once the delay is over, the next acquire is granted, with a higher fence.
    const next = await eventually(
      () => post(path(name, "acquire"), { ttlMs: 1000 }),
      (r) => r.status === 200,
      5000,
    );
    expect(next.status).toBe(200);
    expect(next.body.expiresAt - next.body.ttlMs).toBeGreaterThanOrEqual(lapsed.expiresAt + 1500);
    expect(next.body.fence).toBeGreaterThan(lapsed.fence);
    expect((await get(path(name))).body.delayedUntil).toBeNull();
  });

  it("a waiter in line through the lapse is granted only after the delay", async () => {
    const name = uniqueName("delay-waiter");
    const lapsed = (await post(path(name, "acquire"), { ttlMs: 400, lockDelayMs: 1000 })).body; // never released
    const waited = await post(path(name, "acquire"), { ttlMs: 1000, waitMs: 6000 });
    expect(waited.status).toBe(200);
    // Granted by the store's clock no sooner than the lapse plus the delay.
    expect(waited.body.expiresAt - waited.body.ttlMs).toBeGreaterThanOrEqual(lapsed.expiresAt + 1000);
  });

  it("a release has no delay, and a heartbeat carries the delay to the lease's new end", async () => {
    const name = uniqueName("delay-release");
    const held = (await post(path(name, "acquire"), { ttlMs: 5000, lockDelayMs: 60_000 })).body;
    await post(path(name, "release"), { token: held.token });
    expect((await get(path(name))).body).toMatchObject({ held: false, delayedUntil: null });
    // A TTL the heartbeat lands inside even on a busy machine.
    const again = await post(path(name, "acquire"), { ttlMs: 1000, lockDelayMs: 700 });
    expect(again.status).toBe(200);
    const beat = (await post(path(name, "heartbeat"), { token: again.body.token, ttlMs: 500 })).body;
    const free = await eventually(
      () => get(path(name)),
      (r) => r.body.held === false,
    );
    expect(free.body.delayedUntil).toBe(beat.expiresAt + 700);
  });

  it("refuses a lockDelayMs outside 0..60000, and changes nothing", async () => {
    const name = uniqueName("delay-bad");
    for (const lockDelayMs of [-1, 60_001, 1.5, "1000"]) {
      const res = await post(path(name, "acquire"), { ttlMs: 1000, lockDelayMs });
      expect(res.status, JSON.stringify(lockDelayMs)).toBe(400);
      expect(res.body.error).toBe("invalid_lock_delay");
    }
    expect((await get(path(name))).body).toMatchObject({ held: false, delayedUntil: null });
  });
}
