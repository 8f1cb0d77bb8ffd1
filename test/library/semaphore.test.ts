import type { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { sharedRedis, sleep, spyStore, unique } from "../support/library";
import { ConflictError, HoldfastError, InvalidInputError, LeaseLostError, LockedError, Semaphore } from "holdfast";

/**
 * The counting semaphore as an app uses it: `import { Semaphore } from
 * "holdfast"` over a real @upstash/redis client, against a real
 * redis-server behind the project's Upstash gateway (see mutex.test.ts).
 */
const semKeys = (redis: Redis, name: string, ns = "default") => redis.keys(`hf:{sem:${ns}:${name}}*`);

describe("Semaphore over @upstash/redis", () => {
  it("accounts for permits per holder: acquire, inspect, release", async () => {
    const name = unique("count");
    const sem = new Semaphore(sharedRedis(), name, { limit: 5 });
    expect(await sem.inspect()).toEqual({ limit: null, used: 0, holders: 0, holderLabels: [], expiresAt: null });
    const a = await sem.acquire({ ttlMs: 5000, permits: 2 });
    expect(a).toMatchObject({ name, permits: 2, limit: 5, available: 3, ttlMs: 5000 });
    const b = await sem.acquire({ ttlMs: 5000, permits: 3 });
    expect(b).toMatchObject({ permits: 3, available: 0 });
    expect(b.fence).toBeGreaterThan(a.fence); // every grant gets a new fence
    expect(b.token).not.toBe(a.token);
    expect(await sem.inspect()).toEqual({ limit: 5, used: 5, holders: 2, holderLabels: [], expiresAt: expect.any(Number) });

    const err = await sem.acquire({ ttlMs: 5000 }).catch((e) => e);
    expect(err).toBeInstanceOf(LockedError);
    expect(err.retryAfterMs).toBeGreaterThan(0);
    expect(err.retryAfterMs).toBeLessThanOrEqual(5000);

    expect(await sem.release(a.token)).toEqual({ released: true, permits: 2, available: 2 });
    expect(await sem.inspect()).toEqual({ limit: 5, used: 3, holders: 1, holderLabels: [], expiresAt: expect.any(Number) });
    await expect(sem.acquire({ ttlMs: 5000, permits: 3 })).rejects.toBeInstanceOf(LockedError);
    const c = await sem.acquire({ ttlMs: 5000, permits: 2 });
    expect(c.available).toBe(0);
    await expect(sem.release(a.token)).rejects.toBeInstanceOf(LeaseLostError);
    await sem.release(b.token);
    expect(await sem.release(c.token)).toEqual({ released: true, permits: 2, available: 5 });
    expect(await sem.inspect()).toMatchObject({ used: 0, holders: 0 });
  });

  it("the default is one permit; limit 1 is a mutex", async () => {
    const sem = new Semaphore(sharedRedis(), unique("one"), { limit: 1 });
    expect(sem.limit).toBe(1);
    const g = await sem.acquire({ ttlMs: 5000 });
    expect(g).toMatchObject({ permits: 1, limit: 1, available: 0 });
    await expect(sem.acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
    await sem.release(g.token);
    expect((await sem.acquire({ ttlMs: 5000 })).permits).toBe(1);
  });

  it("a different limit while anyone holds is limit_mismatch, at once and whatever the wait; once free any limit goes", async () => {
    const name = unique("mismatch");
    const three = new Semaphore(sharedRedis(), name, { limit: 3 });
    const held = await three.acquire({ ttlMs: 5000 });
    const four = new Semaphore(sharedRedis(), name, { limit: 4 });
    for (const waitMs of [0, 3000]) {
      const started = Date.now();
      const err = await four.acquire({ ttlMs: 5000, waitMs }).catch((e) => e);
      expect(err).toBeInstanceOf(ConflictError);
      expect(err).toBeInstanceOf(HoldfastError);
      expect(err.code).toBe("limit_mismatch");
      expect(err.message).toContain("limit 3");
      expect(Date.now() - started).toBeLessThan(1000);
    }
    expect(await three.inspect()).toEqual({ limit: 3, used: 1, holders: 1, holderLabels: [], expiresAt: expect.any(Number) });
    await three.release(held.token);
    expect(await four.acquire({ ttlMs: 5000, permits: 4 })).toMatchObject({ limit: 4, available: 0 });
    expect((await three.acquire({ ttlMs: 5000 }).catch((e) => e)).code).toBe("limit_mismatch");
  });

  it("permits over the limit are refused before any store call, and nothing changes", async () => {
    const name = unique("over");
    const { store, calls } = spyStore(sharedRedis());
    const sem = new Semaphore(store, name, { limit: 5 });
    for (const waitMs of [0, 2000]) {
      const err = await sem.acquire({ ttlMs: 5000, permits: 6, waitMs }).catch((e) => e);
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err.code).toBe("invalid_permits");
      expect(err.message).toContain("permits");
    }
    expect(calls).toEqual([]);
    expect(await semKeys(sharedRedis(), name)).toEqual([]);
    expect(await sem.inspect()).toEqual({ limit: null, used: 0, holders: 0, holderLabels: [], expiresAt: null });
    expect((await sem.acquire({ ttlMs: 5000, permits: 5 })).available).toBe(0);
  });

  it("waitMs polls until enough permits are given back, with one token for every attempt", async () => {
    const name = unique("wait");
    const { store, calls } = spyStore(sharedRedis());
    const sem = new Semaphore(store, name, { limit: 3 });
    const a = await sem.acquire({ ttlMs: 5000, permits: 2 });
    const b = await sem.acquire({ ttlMs: 5000, permits: 1 });
    calls.length = 0;
    setTimeout(() => void new Semaphore(sharedRedis(), name, { limit: 3 }).release(b.token), 150);
    setTimeout(() => void new Semaphore(sharedRedis(), name, { limit: 3 }).release(a.token), 400);
    const started = Date.now();
    const g = await sem.acquire({ ttlMs: 5000, permits: 3, waitMs: 5000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350); // one freed permit was not enough
    expect(g).toMatchObject({ permits: 3, available: 0 });
    const attempts = calls.filter((c) => c.method === "semaphore.acquire");
    expect(attempts.length).toBeGreaterThan(1);
    const tokens = new Set(attempts.map((c) => (c.args[1] as { token: string }).token));
    expect([...tokens]).toEqual([g.token]);
    for (const c of attempts) expect(c.args[1]).toMatchObject({ limit: 3, permits: 3, ttlMs: 5000, watch: false });
  });

  it("a wait that runs out is LockedError and leaves no holder behind", async () => {
    const name = unique("timeout");
    const sem = new Semaphore(sharedRedis(), name, { limit: 1 });
    await sem.acquire({ ttlMs: 5000 });
    const started = Date.now();
    await expect(sem.acquire({ ttlMs: 5000, waitMs: 300 })).rejects.toBeInstanceOf(LockedError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(await sem.inspect()).toEqual({ limit: 1, used: 1, holders: 1, holderLabels: [], expiresAt: expect.any(Number) });
  });

  it("each holder's permits lapse at its own TTL", async () => {
    const name = unique("lapse");
    const sem = new Semaphore(sharedRedis(), name, { limit: 3 });
    // Short enough to lapse soon, long enough for the next two calls to land inside it on a busy machine.
    const short = await sem.acquire({ ttlMs: 1000, permits: 2 });
    const long = await sem.acquire({ ttlMs: 10_000, permits: 1 });
    await expect(sem.acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
    await sleep(Math.max(0, short.expiresAt - Date.now()) + 150);
    expect(await sem.inspect()).toMatchObject({ limit: 3, used: 1, holders: 1 });
    await expect(sem.heartbeat(short.token)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(sem.release(short.token)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await sem.heartbeat(long.token)).ttlMs).toBe(10_000);
    expect((await sem.acquire({ ttlMs: 5000, permits: 2 })).available).toBe(0);
  });

  it("a waiter is granted when a holder lapses", async () => {
    const name = unique("lapse-wait");
    const sem = new Semaphore(sharedRedis(), name, { limit: 2 });
    const holder = await sem.acquire({ ttlMs: 300, permits: 2 });
    const started = Date.now();
    const g = await sem.acquire({ ttlMs: 5000, permits: 2, waitMs: 5000 });
    // Granted at the holder's lapse, not before (its end on the store's clock: how long the first answer took to come back does not count).
    expect(Date.now()).toBeGreaterThanOrEqual(holder.expiresAt - 100);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(g.available).toBe(0);
  });

  it("heartbeat extends a holder's lease from the store's now", async () => {
    const sem = new Semaphore(sharedRedis(), unique("hb"), { limit: 2 });
    // 1 s: the first heartbeat must come within it, on a loaded machine too (as in rwLock.test.ts).
    const g = await sem.acquire({ ttlMs: 1000 });
    const hb = await sem.heartbeat(g.token, 9000);
    expect(hb).toMatchObject({ ttlMs: 9000, fence: g.fence });
    expect(hb.expiresAt).toBeGreaterThan(g.expiresAt);
    await sleep(1200);
    expect(await sem.inspect()).toMatchObject({ used: 1, holders: 1 });
    expect((await sem.heartbeat(g.token)).ttlMs).toBe(1000); // default: the acquire's ttl
    await expect(sem.heartbeat("hf_nobody")).rejects.toBeInstanceOf(LeaseLostError);
  });

  it("withPermits gives the permits back even when the work throws", async () => {
    const sem = new Semaphore(sharedRedis(), unique("with"), { limit: 3 });
    await expect(sem.withPermits({ ttlMs: 5000, permits: 2 }, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await sem.inspect()).toMatchObject({ used: 0, holders: 0 });
    const r = await sem.withPermits({ ttlMs: 5000, permits: 3 }, async (g) => {
      expect((await sem.inspect()).used).toBe(3);
      return g.permits;
    });
    expect(r).toBe(3);
    expect(await sem.inspect()).toMatchObject({ used: 0, holders: 0 });
    // A lease lost during the work is not an error of the release.
    expect(
      await sem.withPermits({ ttlMs: 150 }, async () => {
        await sleep(300);
        return "late";
      }),
    ).toBe("late");
  });

  it("8 concurrent loops never hold more than the limit", async () => {
    const name = unique("race");
    const limit = 3;
    let inUse = 0;
    let peak = 0;
    const violations: string[] = [];
    let granted = 0;
    const loop = async (id: number) => {
      const sem = new Semaphore(sharedRedis(), name, { limit });
      for (let i = 0; i < 8; i++) {
        const permits = ((id + i) % 2) + 1;
        try {
          const g = await sem.acquire({ ttlMs: 10_000, waitMs: 8000, permits });
          inUse += permits;
          peak = Math.max(peak, inUse);
          if (inUse > limit) violations.push(`loop ${id}: ${inUse} permits in use`);
          await sleep(Math.random() * 10);
          inUse -= permits;
          await sem.release(g.token);
          granted++;
        } catch (err) {
          if (!(err instanceof LockedError)) throw err;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, id) => loop(id)));
    expect(violations).toEqual([]);
    expect(peak).toBeGreaterThan(1); // holders did overlap
    expect(granted).toBeGreaterThan(32);
    expect(await new Semaphore(sharedRedis(), name, { limit }).inspect()).toMatchObject({ used: 0, holders: 0 });
  }, 60_000);
});

describe("bad input to Semaphore changes nothing and names the field", () => {
  const redis = sharedRedis();

  it("limits, names and namespaces outside the contract are refused at construction", () => {
    for (const limit of [0, -1, 10_001, 1.5, "3", undefined, null, Number.NaN]) {
      const err = (() => {
        try {
          new Semaphore(redis, "c", { limit } as never);
        } catch (e) {
          return e as InvalidInputError;
        }
      })();
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err?.code).toBe("invalid_limit");
      expect(err?.message).toContain("limit");
    }
    expect(() => new Semaphore(redis, "c", undefined as never)).toThrow(expect.objectContaining({ code: "invalid_limit" }));
    expect(new Semaphore(redis, "c", { limit: 10_000 }).limit).toBe(10_000);
    for (const name of ["a b", "a{b}", "", "x".repeat(201), "a/b"]) {
      expect(() => new Semaphore(redis, name, { limit: 2 })).toThrow(expect.objectContaining({ code: "invalid_name" }));
    }
    for (const namespace of ["a:b", "a{b", "", "x".repeat(65), "a b"]) {
      expect(() => new Semaphore(redis, "c", { limit: 2, namespace })).toThrow(expect.objectContaining({ code: "invalid_namespace" }));
    }
  });

  const acquireCases = [
    ["a fractional ttlMs", { ttlMs: 1500.5 }, "invalid_ttl", "ttlMs"],
    ["a missing ttlMs", {}, "invalid_ttl", "ttlMs"],
    ["ttlMs below 100", { ttlMs: 99 }, "invalid_ttl", "ttlMs"],
    ["ttlMs as a string", { ttlMs: "1000" }, "invalid_ttl", "ttlMs"],
    ["waitMs past the longest timer", { ttlMs: 1000, waitMs: 2_147_483_648 }, "invalid_wait", "waitMs"],
    ["a fractional waitMs", { ttlMs: 1000, waitMs: 10.5 }, "invalid_wait", "waitMs"],
    ["permits 0", { ttlMs: 1000, permits: 0 }, "invalid_permits", "permits"],
    ["negative permits", { ttlMs: 1000, permits: -1 }, "invalid_permits", "permits"],
    ["fractional permits", { ttlMs: 1000, permits: 1.5 }, "invalid_permits", "permits"],
    ["permits as a string", { ttlMs: 1000, permits: "1" }, "invalid_permits", "permits"],
    ["permits above the limit", { ttlMs: 1000, permits: 4 }, "invalid_permits", "permits"],
  ] as const;

  for (const method of ["acquire", "withPermits"] as const) {
    for (const [label, options, code, field] of acquireCases) {
      it(`${method} with ${label} throws InvalidInputError ${code} before any store call`, async () => {
        const name = unique("bad");
        const { store, calls } = spyStore(redis);
        const sem = new Semaphore(store, name, { limit: 3 });
        let ran = false;
        const call =
          method === "acquire"
            ? sem.acquire(options as never)
            : sem.withPermits(options as never, async () => {
                ran = true;
              });
        const err = await call.catch((e) => e);
        expect(err).toBeInstanceOf(InvalidInputError);
        expect(err.code).toBe(code);
        expect(err.message).toContain(field);
        expect(ran).toBe(false);
        expect(calls).toEqual([]);
        expect(await semKeys(redis, name)).toEqual([]);
        expect((await sem.acquire({ ttlMs: 5000, permits: 3 })).available).toBe(0); // not stuck
      });
    }
  }

  it("heartbeat and release with bad arguments throw before any store call and leave the holder as it was", async () => {
    const name = unique("bad-hb");
    const { store, calls } = spyStore(redis);
    const sem = new Semaphore(store, name, { limit: 2 });
    const g = await sem.acquire({ ttlMs: 5000 });
    const before = await redis.hgetall(`hf:{sem:default:${name}}`);
    calls.length = 0;
    const cases: Array<[() => Promise<unknown>, string, string]> = [
      [() => sem.heartbeat("", 5000), "invalid_token", "token"],
      [() => sem.heartbeat(undefined as never), "invalid_token", "token"],
      [() => sem.heartbeat(g.token, 50), "invalid_ttl", "ttlMs"],
      [() => sem.heartbeat(g.token, 1e12), "invalid_ttl", "ttlMs"],
      [() => sem.heartbeat(g.token, null as never), "invalid_ttl", "ttlMs"],
      [() => sem.release(""), "invalid_token", "token"],
      [() => sem.release("t".repeat(257)), "invalid_token", "token"],
      [() => sem.release("€".repeat(200)), "invalid_token", "token"],
      [() => sem.heartbeat("€".repeat(200)), "invalid_token", "token"],
      [() => sem.release({} as never), "invalid_token", "token"],
    ];
    for (const [call, code, field] of cases) {
      const err = (await call().catch((e) => e)) as InvalidInputError;
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err.code).toBe(code);
      expect(err.message).toContain(field);
    }
    expect(calls).toEqual([]);
    expect(await redis.hgetall(`hf:{sem:default:${name}}`)).toEqual(before);
    expect(await sem.release(g.token)).toEqual({ released: true, permits: 1, available: 2 });
  });
});
