import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { namespaceKey, verifyNotification } from "../../../src/wire/signature.js";
import { api, KEY_B, sleep, type StoreKind, uniqueName } from "../../support/workers/api.js";
import { deliveries, eventually, holderIdOfToken, newReceiver, runAlarmsUntilQuiet } from "../../support/workers/lockObjectHelpers.js";

/**
 * Tracks the permits the clients believe they hold. A client counts its
 * permits after its grant arrived and gives them back before it sends its
 * release, so what is counted here is never more than the store has granted.
 */
class PermitChecker {
  inUse = 0;
  maxInUse = 0;
  grants = 0;
  violations: string[] = [];

  constructor(readonly limit: number) {}

  enter(permits: number) {
    this.grants += 1;
    this.inUse += permits;
    this.maxInUse = Math.max(this.maxInUse, this.inUse);
    if (this.inUse > this.limit) this.violations.push(`${this.inUse} permits in use of ${this.limit}`);
  }

  leave(permits: number) {
    this.inUse -= permits;
  }
}

/**
 * Every counting-semaphore behaviour of the contract (docs/API.md,
 * "Counting semaphore"), run against both stores (test/conformance/index.ts).
 */
export function semaphoreConformance(kind: StoreKind) {
  const { post, get, call } = api(kind);
  const path = (name: string, op = "") => `/v1/semaphores/${name}${op ? `/${op}` : ""}`;
  const acquire = (name: string, body: Record<string, unknown>) => post(path(name, "acquire"), body);
  const state = async (name: string) => (await get(path(name))).body;
  const untilWaiters = (name: string, n: number) =>
    eventually(
      () => state(name),
      (s) => s.waiters === n,
    );

  // ---- basics ------------------------------------------------------------------------------

  it("inspect of an unused semaphore: no limit, nothing used, nobody holding or waiting", async () => {
    const name = uniqueName("sem-free");
    const res = await get(path(name));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name, limit: null, used: 0, holders: 0, holderLabels: [], expiresAt: null, waiters: 0 });
  });

  it("grants permits with a token, a fence, the store's expiry and what is left available", async () => {
    const name = uniqueName("sem-grant");
    const before = Date.now();
    const res = await acquire(name, { limit: 5, permits: 2, ttlMs: 5000 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["available", "expiresAt", "fence", "limit", "name", "permits", "token", "ttlMs"]);
    expect(res.body).toMatchObject({ name, permits: 2, limit: 5, ttlMs: 5000, available: 3 });
    expect(res.body.token).toMatch(/^hf_[A-Za-z0-9_-]{24}$/);
    expect(Number.isSafeInteger(res.body.fence)).toBe(true);
    expect(res.body.expiresAt).toBeGreaterThan(before + 4000);
    expect(res.body.expiresAt).toBeLessThan(Date.now() + 6000);
    expect(await state(name)).toEqual({ name, limit: 5, used: 2, holders: 1, holderLabels: [], expiresAt: expect.any(Number), waiters: 0 });
  });

  it("permits default to 1", async () => {
    const name = uniqueName("sem-default");
    const res = await acquire(name, { limit: 3, ttlMs: 5000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ permits: 1, limit: 3, available: 2 });
  });

  it("permit accounting: grants up to the limit, then 409 locked; a release gives its permits back", async () => {
    const name = uniqueName("sem-accounting");
    const a = (await acquire(name, { limit: 5, permits: 2, ttlMs: 5000 })).body;
    expect(a.available).toBe(3);
    const b = await acquire(name, { limit: 5, permits: 3, ttlMs: 3000 });
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ permits: 3, available: 0 });
    expect(b.body.token).not.toBe(a.token);
    const full = await acquire(name, { limit: 5, permits: 1, ttlMs: 1000 });
    expect(full.status).toBe(409);
    expect(full.body.error).toBe("locked");
    expect(full.body.retryAfterMs).toBeGreaterThan(0);
    expect(full.body.retryAfterMs).toBeLessThanOrEqual(5000);
    expect(full.headers.get("retry-after")).toBe(String(Math.ceil(full.body.retryAfterMs / 1000)));
    expect(await state(name)).toEqual({ name, limit: 5, used: 5, holders: 2, holderLabels: [], expiresAt: expect.any(Number), waiters: 0 });

    const rel = await post(path(name, "release"), { token: a.token });
    expect(rel.status).toBe(200);
    expect(rel.body).toEqual({ released: true, permits: 2, available: 2 });
    expect(await state(name)).toMatchObject({ limit: 5, used: 3, holders: 1 });
    // 2 free: 3 do not fit, 2 do.
    expect((await acquire(name, { limit: 5, permits: 3, ttlMs: 1000 })).status).toBe(409);
    const c = await acquire(name, { limit: 5, permits: 2, ttlMs: 1000 });
    expect(c.status).toBe(200);
    expect(c.body.available).toBe(0);
  });

  it("grants exactly `limit` of many concurrent single-permit acquires", async () => {
    const name = uniqueName("sem-race");
    const results = await Promise.all(Array.from({ length: 20 }, () => acquire(name, { limit: 4, ttlMs: 5000 })));
    const granted = results.filter((r) => r.status === 200);
    expect(granted).toHaveLength(4);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("locked");
    }
    expect(new Set(granted.map((r) => r.body.token)).size).toBe(4);
    expect(granted.map((r) => r.body.available).sort()).toEqual([0, 1, 2, 3]);
    expect(await state(name)).toMatchObject({ limit: 4, used: 4, holders: 4 });
  });

  it("limit 1 is a mutex", async () => {
    const name = uniqueName("sem-one");
    const a = (await acquire(name, { limit: 1, ttlMs: 5000 })).body;
    expect(a.available).toBe(0);
    expect((await acquire(name, { limit: 1, ttlMs: 5000 })).status).toBe(409);
    await post(path(name, "release"), { token: a.token });
    expect((await acquire(name, { limit: 1, ttlMs: 5000 })).status).toBe(200);
  });

  it("limit_mismatch while holders use another limit (at once, also with waitMs); a new limit once nobody holds", async () => {
    const name = uniqueName("sem-mismatch");
    const a = (await acquire(name, { limit: 3, ttlMs: 5000 })).body;
    const before = await state(name);
    const started = Date.now();
    for (const body of [
      { limit: 5, ttlMs: 5000 },
      { limit: 2, permits: 1, ttlMs: 5000 },
      { limit: 5, ttlMs: 5000, waitMs: 5000 },
    ]) {
      const res = await acquire(name, body);
      expect(res.status).toBe(409);
      expect(res.body.error).toBe("limit_mismatch");
      expect(typeof res.body.message).toBe("string");
      expect(res.body.message).toContain("3");
    }
    expect(Date.now() - started).toBeLessThan(4000); // the waiting one was not held for its waitMs
    expect(await state(name)).toEqual(before);
    expect(before).toMatchObject({ limit: 3, used: 1, holders: 1 });
    // The same limit is fine.
    const b = await acquire(name, { limit: 3, permits: 2, ttlMs: 5000 });
    expect(b.status).toBe(200);
    await post(path(name, "release"), { token: a.token });
    await post(path(name, "release"), { token: b.body.token });
    expect(await state(name)).toMatchObject({ limit: null, used: 0, holders: 0 });
    const c = await acquire(name, { limit: 10, permits: 7, ttlMs: 5000 });
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ limit: 10, available: 3 });
    expect(await state(name)).toMatchObject({ limit: 10, used: 7, holders: 1 });
  });

  it("release and heartbeat with an unknown or released token are lease_lost and change nothing", async () => {
    const name = uniqueName("sem-wrong-token");
    const a = (await acquire(name, { limit: 3, ttlMs: 5000 })).body;
    const b = (await acquire(name, { limit: 3, ttlMs: 5000 })).body;
    await post(path(name, "release"), { token: b.token });
    const before = await state(name);
    for (const token of ["hf_AAAAAAAAAAAAAAAAAAAAAAAA", b.token]) {
      const rel = await post(path(name, "release"), { token });
      expect(rel.status).toBe(409);
      expect(rel.body.error).toBe("lease_lost");
      const hb = await post(path(name, "heartbeat"), { token, ttlMs: 60_000 });
      expect(hb.status).toBe(409);
      expect(hb.body.error).toBe("lease_lost");
    }
    expect(await state(name)).toEqual(before);
    expect(before).toMatchObject({ limit: 3, used: 1, holders: 1 });
    expect((await post(path(name, "release"), { token: a.token })).status).toBe(200);
  });

  it("heartbeat extends the lease from the store's now, by default by the acquire's ttl", async () => {
    const name = uniqueName("sem-hb");
    // 3 s: the heartbeat must land inside the lease, and on a busy runner one came after 1 s.
    const held = (await acquire(name, { limit: 2, ttlMs: 3000 })).body;
    await sleep(50);
    const hb = await post(path(name, "heartbeat"), { token: held.token });
    expect(hb.status).toBe(200);
    expect(Object.keys(hb.body).sort()).toEqual(["expiresAt", "fence", "ttlMs"]);
    expect(hb.body).toMatchObject({ ttlMs: 3000, fence: held.fence });
    expect(hb.body.expiresAt).toBeGreaterThan(held.expiresAt);
    const longer = await post(path(name, "heartbeat"), { token: held.token, ttlMs: 20_000 });
    expect(longer.body).toMatchObject({ ttlMs: 20_000, fence: held.fence });
    expect(longer.body.expiresAt).toBeGreaterThan(held.expiresAt + 15_000);
  });

  it("a heartbeat keeps permits held past their first TTL; the holder that does not heartbeat loses its own", async () => {
    const name = uniqueName("sem-hb-keeps");
    // A TTL long enough for the second acquire and the heartbeat to land inside it on a busy machine.
    const kept = (await acquire(name, { limit: 3, permits: 2, ttlMs: 3000 })).body;
    const lapsing = (await acquire(name, { limit: 3, permits: 1, ttlMs: 1000 })).body;
    expect((await post(path(name, "heartbeat"), { token: kept.token, ttlMs: 8000 })).status).toBe(200);
    const s = await eventually(
      () => state(name),
      (v) => v.used < 3,
      6000,
    );
    expect(s).toMatchObject({ limit: 3, used: 2, holders: 1 });
    expect(Date.now()).toBeGreaterThanOrEqual(lapsing.expiresAt - 100); // it lapsed at its TTL, not before
    expect((await acquire(name, { limit: 3, permits: 2, ttlMs: 1000 })).status).toBe(409);
    const gone = await post(path(name, "heartbeat"), { token: lapsing.token });
    expect(gone.status).toBe(409);
    expect(gone.body.error).toBe("lease_lost");
    expect((await post(path(name, "release"), { token: kept.token })).body).toEqual({ released: true, permits: 2, available: 3 });
  });

  it("inspect never reveals a token", async () => {
    const name = uniqueName("sem-inspect");
    const a = (await acquire(name, { limit: 4, permits: 1, ttlMs: 5000 })).body;
    const b = (await acquire(name, { limit: 4, permits: 2, ttlMs: 5000 })).body;
    const res = await get(path(name));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["expiresAt", "holderLabels", "holders", "limit", "name", "used", "waiters"]);
    expect(res.body).toEqual({ name, limit: 4, used: 3, holders: 2, holderLabels: [], expiresAt: expect.any(Number), waiters: 0 });
    for (const t of [a.token, b.token]) expect(JSON.stringify(res.body)).not.toContain(t);
  });

  it("every grant gets a new, larger fence, also after a lease expires", async () => {
    const name = uniqueName("sem-fence");
    const fences: number[] = [];
    const a = (await acquire(name, { limit: 3, ttlMs: 5000 })).body;
    const b = (await acquire(name, { limit: 3, ttlMs: 5000 })).body; // beside a
    fences.push(a.fence, b.fence);
    await post(path(name, "release"), { token: a.token });
    await post(path(name, "release"), { token: b.token });
    for (let i = 0; i < 3; i++) {
      const g = (await acquire(name, { limit: 3, ttlMs: 5000 })).body;
      fences.push(g.fence);
      await post(path(name, "release"), { token: g.token });
    }
    const short = (await acquire(name, { limit: 3, ttlMs: 100 })).body;
    fences.push(short.fence);
    await sleep(250);
    const after = await acquire(name, { limit: 3, ttlMs: 5000 });
    expect(after.status).toBe(200);
    fences.push(after.body.fence);
    for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
  });

  it("keeps namespaces apart: another key can neither see nor release your permits", async () => {
    const name = uniqueName("sem-tenant");
    const mine = (await acquire(name, { limit: 1, ttlMs: 5000 })).body;
    expect((await get(path(name), { key: KEY_B })).body).toMatchObject({ limit: null, used: 0, holders: 0 });
    const theirs = await post(path(name, "release"), { token: mine.token }, { key: KEY_B });
    expect(theirs.status).toBe(409);
    expect(theirs.body.error).toBe("lease_lost");
    expect((await post(path(name, "acquire"), { limit: 2, ttlMs: 5000 }, { key: KEY_B })).status).toBe(200);
    expect(await state(name)).toMatchObject({ limit: 1, used: 1, holders: 1 });
  });

  // ---- waiting -----------------------------------------------------------------------------

  it("a waiting acquire is granted once enough permits are free, not before; waitMs that runs out is 409 and leaves the line", async () => {
    const name = uniqueName("sem-wait");
    const a = (await acquire(name, { limit: 2, ttlMs: 10_000 })).body;
    const b = (await acquire(name, { limit: 2, ttlMs: 10_000 })).body;
    const timedOut = await acquire(name, { limit: 2, ttlMs: 5000, waitMs: 300 });
    expect(timedOut.status).toBe(409);
    expect(timedOut.body.error).toBe("locked");
    expect((await state(name)).waiters).toBe(0);

    let settled = false;
    const waiting = acquire(name, { limit: 2, permits: 2, ttlMs: 5000, waitMs: 15_000 }).then((r) => {
      settled = true;
      return r;
    });
    await untilWaiters(name, 1);
    await post(path(name, "release"), { token: a.token });
    // One permit free, two wanted: still waiting.
    expect(await state(name)).toMatchObject({ used: 1, holders: 1, waiters: 1 });
    expect(settled).toBe(false);
    await post(path(name, "release"), { token: b.token });
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ permits: 2, limit: 2, available: 0 });
    expect(res.body.fence).toBeGreaterThan(b.fence);
    expect(await state(name)).toEqual({ name, limit: 2, used: 2, holders: 1, holderLabels: [], expiresAt: expect.any(Number), waiters: 0 });
  });

  it("FIFO: a later small request does not overtake an earlier big one, even with a permit free", async () => {
    const name = uniqueName("sem-fifo");
    const a = (await acquire(name, { limit: 4, permits: 3, ttlMs: 10_000 })).body; // 1 free
    const settled = new Set<string>();
    const big = acquire(name, { limit: 4, permits: 3, ttlMs: 10_000, waitMs: 15_000 }).then((r) => {
      settled.add("big");
      return r;
    });
    await untilWaiters(name, 1);
    // A try-lock for the free permit is refused: the big request is first.
    const tryOne = await acquire(name, { limit: 4, permits: 1, ttlMs: 10_000 });
    expect(tryOne.status).toBe(409);
    expect(tryOne.body.error).toBe("locked");
    const small = acquire(name, { limit: 4, permits: 1, ttlMs: 10_000, waitMs: 15_000 }).then((r) => {
      settled.add("small");
      return r;
    });
    await untilWaiters(name, 2);
    expect(await state(name)).toMatchObject({ used: 3, holders: 1, waiters: 2 });
    expect([...settled]).toEqual([]);

    await post(path(name, "release"), { token: a.token });
    const [bigRes, smallRes] = await Promise.all([big, small]);
    expect(bigRes.status).toBe(200);
    expect(smallRes.status).toBe(200);
    // Granted in line order: the big request first.
    expect(smallRes.body.fence).toBeGreaterThan(bigRes.body.fence);
    expect(await state(name)).toEqual({ name, limit: 4, used: 4, holders: 2, holderLabels: [], expiresAt: expect.any(Number), waiters: 0 });
  });

  it("a waiter whose wait runs out while the line's store step grants it holds nothing: the grant is taken back", async () => {
    const name = uniqueName("sem-left");
    const receiver = await newReceiver();
    // onExpire sends even a free semaphore's acquire through the lock object's line, as its first (fresh) waiter;
    // a 1 ms wait runs out while the store step that grants it is under way (on Redis, a round trip).
    const res = await acquire(name, { limit: 1, ttlMs: 30_000, waitMs: 1, onExpire: receiver.url });
    if (res.status === 200) {
      // Granted in time (the Durable store's step runs in memory): then it holds, as answered, and its token releases it.
      expect(await state(name)).toMatchObject({ used: 1, holders: 1 });
      expect((await post(path(name, "release"), { token: res.body.token })).status).toBe(200);
      expect((await state(name)).used).toBe(0);
      return;
    }
    expect(res.status).toBe(409);
    // Nobody knows that grant's token: the permit must be free again at once, not after 30 s.
    expect(
      (
        await eventually(
          () => state(name),
          (s) => s.used === 0,
          3000,
        )
      ).used,
    ).toBe(0);
    // Usable again: a waiting acquire gets it (a try-lock may still be held back by the registration grace).
    expect((await acquire(name, { limit: 1, ttlMs: 1000, waitMs: 2000 })).status).toBe(200);
  });

  it("a holder that vanishes frees its permits for a waiter at its own TTL", async () => {
    const name = uniqueName("sem-vanish");
    const staying = (await acquire(name, { limit: 2, ttlMs: 10_000 })).body;
    // Never released; its TTL outlasts the steps up to the state read below on any machine, so that read
    // always sees it still holding (checked, not assumed).
    const vanishing = (await acquire(name, { limit: 2, ttlMs: 3000 })).body;
    let settled = false;
    const waiting = acquire(name, { limit: 2, permits: 2, ttlMs: 5000, waitMs: 15_000 }).then((r) => {
      settled = true;
      return r;
    });
    await untilWaiters(name, 1);
    await post(path(name, "release"), { token: staying.token });
    const s = await state(name);
    expect(Date.now(), "the state was read before the vanished holder's lease could end").toBeLessThan(vanishing.expiresAt - 100);
    expect(s).toMatchObject({ used: 1, holders: 1, waiters: 1 });
    expect(settled).toBe(false);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.permits).toBe(2);
    const grantedByStore = res.body.expiresAt - res.body.ttlMs;
    expect(grantedByStore).toBeGreaterThanOrEqual(vanishing.expiresAt - 50);
    expect(grantedByStore).toBeLessThan(vanishing.expiresAt + 2000);
    expect(await state(name)).toMatchObject({ used: 2, holders: 1, waiters: 0 });
  });

  it("8 clients looping acquire -> check -> release never have more than `limit` permits in use", async () => {
    const name = uniqueName("sem-contention");
    const limit = 3;
    const checker = new PermitChecker(limit);
    const client = async (c: number) => {
      for (let i = 0; i < 4; i++) {
        const permits = ((c + i) % 2) + 1;
        const g = await acquire(name, { limit, permits, ttlMs: 10_000, waitMs: 30_000 });
        expect(g.status).toBe(200);
        expect(g.body).toMatchObject({ permits, limit });
        expect(g.body.available).toBeGreaterThanOrEqual(0);
        expect(g.body.available).toBeLessThanOrEqual(limit - permits);
        checker.enter(permits);
        await sleep(Math.random() * 8);
        checker.leave(permits);
        const rel = await post(path(name, "release"), { token: g.body.token });
        expect(rel.status).toBe(200);
        expect(rel.body).toMatchObject({ released: true, permits });
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
    expect(checker.violations).toEqual([]);
    expect(checker.grants).toBe(32);
    expect(checker.maxInUse).toBeLessThanOrEqual(limit);
    expect(await state(name)).toEqual({ name, limit: null, used: 0, holders: 0, holderLabels: [], expiresAt: null, waiters: 0 });
  });

  // ---- expiry notifications ----------------------------------------------------------------

  it("posts a signed expiry notification when a holder vanishes, and none for a holder that released", async () => {
    const name = uniqueName("sem-notify");
    const receiver = await newReceiver();
    // 1 s leases: the second's release must come before its end (300 ms lapsed before it on a loaded runner, as the
    // read-write lock's twin of this case did).
    const vanished = (await acquire(name, { limit: 3, permits: 2, ttlMs: 1000, onExpire: receiver.url })).body;
    const released = (await acquire(name, { limit: 3, ttlMs: 1000, onExpire: receiver.url })).body;
    expect((await post(path(name, "release"), { token: released.token })).status).toBe(200);
    await sleep(Math.max(0, vanished.expiresAt - Date.now()) + 50);
    await runAlarmsUntilQuiet(name, "semaphore");
    const got = await eventually(
      () => deliveries(receiver.id),
      (d) => d.length > 0,
      5000,
    );
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0].body)).toEqual({
      kind: "semaphore",
      namespace: "tenant-a",
      name,
      fence: vanished.fence,
      holder: await holderIdOfToken(vanished.token),
      expiredAt: vanished.expiresAt,
    });
    expect(got[0].body).not.toContain(vanished.token);
    expect(got[0].signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v2=[0-9a-f]{64}$/);
    expect(
      await verifyNotification({ body: got[0].body, signature: got[0].signature, key: await namespaceKey(env.WEBHOOK_SECRET!, "tenant-a") }),
    ).not.toBeNull();
    await runAlarmsUntilQuiet(name, "semaphore");
    expect(await deliveries(receiver.id)).toHaveLength(1);
  });

  // ---- bad input ---------------------------------------------------------------------------

  const badAcquires: Array<[string, unknown, string, string?]> = [
    ["missing limit", { ttlMs: 1000 }, "invalid_limit", "limit"],
    ["limit 0", { limit: 0, ttlMs: 1000 }, "invalid_limit", "limit"],
    ["limit above 10000", { limit: 10_001, ttlMs: 1000 }, "invalid_limit", "limit"],
    ["limit not an integer", { limit: 2.5, ttlMs: 1000 }, "invalid_limit", "limit"],
    ["limit as a string", { limit: "3", ttlMs: 1000 }, "invalid_limit", "limit"],
    ["permits 0", { limit: 3, permits: 0, ttlMs: 1000 }, "invalid_permits", "permits"],
    ["negative permits", { limit: 3, permits: -1, ttlMs: 1000 }, "invalid_permits", "permits"],
    ["permits above the limit", { limit: 3, permits: 4, ttlMs: 1000 }, "invalid_permits", "permits"],
    ["permits above 10000", { limit: 10_000, permits: 10_001, ttlMs: 1000 }, "invalid_permits", "permits"],
    ["permits not an integer", { limit: 3, permits: 1.5, ttlMs: 1000 }, "invalid_permits", "permits"],
    ["missing ttlMs", { limit: 3 }, "invalid_ttl", "ttlMs"],
    ["ttlMs below 100", { limit: 3, ttlMs: 99 }, "invalid_ttl", "ttlMs"],
    ["ttlMs above a day", { limit: 3, ttlMs: 86_400_001 }, "invalid_ttl", "ttlMs"],
    ["ttlMs as a string", { limit: 3, ttlMs: "1000" }, "invalid_ttl", "ttlMs"],
    ["waitMs above 60 s", { limit: 3, ttlMs: 1000, waitMs: 60_001 }, "invalid_wait", "waitMs"],
    ["negative waitMs", { limit: 3, ttlMs: 1000, waitMs: -1 }, "invalid_wait", "waitMs"],
    ["a token (the semaphore has no re-entry)", { limit: 3, ttlMs: 1000, token: "hf_AAAAAAAAAAAAAAAAAAAAAAAA" }, "invalid_body", "token"],
    ["unknown field", { limit: 3, ttlMs: 1000, colour: "red" }, "invalid_body", "colour"],
    ["an array", [3, 1000], "invalid_body"],
    ["null", null, "invalid_body"],
    ["onExpire not a URL", { limit: 3, ttlMs: 1000, onExpire: "not a url" }, "invalid_on_expire", "onExpire"],
  ];

  for (const [label, body, code, names] of badAcquires) {
    it(`acquire with ${label} is 400 ${code} and changes nothing`, async () => {
      const name = uniqueName("sem-bad");
      await acquire(name, { limit: 3, ttlMs: 10_000 });
      const before = await state(name);
      const res = await post(path(name, "acquire"), body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(code);
      expect(typeof res.body.message).toBe("string");
      if (names) expect(res.body.message).toContain(names);
      expect(await state(name)).toEqual(before);
      expect(before).toMatchObject({ limit: 3, used: 1, holders: 1 });
    });
  }

  it("bad input on an unused semaphore leaves it unused", async () => {
    const name = uniqueName("sem-bad-free");
    for (const body of [
      { limit: 3, permits: 4, ttlMs: 1000 },
      { limit: 0, ttlMs: 1000 },
      { limit: 3, ttlMs: 50 },
    ]) {
      expect((await post(path(name, "acquire"), body)).status).toBe(400);
    }
    expect(await state(name)).toEqual({ name, limit: null, used: 0, holders: 0, holderLabels: [], expiresAt: null, waiters: 0 });
  });

  it("broken JSON is 400 invalid_body and changes nothing", async () => {
    const name = uniqueName("sem-json");
    await acquire(name, { limit: 3, ttlMs: 10_000 });
    const before = await state(name);
    const res = await call("POST", path(name, "acquire"), undefined, { raw: '{"limit": 3, "ttlMs": 10' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_body");
    expect(await state(name)).toEqual(before);
  });

  it("heartbeat and release need a token; a bad heartbeat ttl or an unknown field is a 400; nothing changes", async () => {
    const name = uniqueName("sem-bad-hb");
    const held = (await acquire(name, { limit: 3, permits: 2, ttlMs: 10_000 })).body;
    const before = await state(name);
    for (const op of ["heartbeat", "release"]) {
      const none = await post(path(name, op), {});
      expect(none.status, op).toBe(400);
      expect(none.body.error, op).toBe("invalid_token");
      const wrongType = await post(path(name, op), { token: 42 });
      expect(wrongType.status, op).toBe(400);
      expect(wrongType.body.error, op).toBe("invalid_token");
      const extra = await post(path(name, op), { token: held.token, permits: 1 });
      expect(extra.status, op).toBe(400);
      expect(extra.body.error, op).toBe("invalid_body");
      expect(extra.body.message, op).toContain("permits");
    }
    const shortHb = await post(path(name, "heartbeat"), { token: held.token, ttlMs: 50 });
    expect(shortHb.status).toBe(400);
    expect(shortHb.body.error).toBe("invalid_ttl");
    expect(await state(name)).toEqual(before);
    expect((await post(path(name, "heartbeat"), { token: held.token })).body).toMatchObject({ ttlMs: 10_000, fence: held.fence });
  });

  it("a bad name is 400 invalid_name; a missing key is 401", async () => {
    const res = await post(path("a%2Fb", "acquire"), { limit: 1, ttlMs: 1000 });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_name");
    expect((await get(path("a%2Fb"))).body.error).toBe("invalid_name");
    const name = uniqueName("sem-auth");
    const anon = await post(path(name, "acquire"), { limit: 1, ttlMs: 1000 }, { key: null });
    expect(anon.status).toBe(401);
    expect(anon.body.error).toBe("unauthorized");
    expect((await state(name)).holders).toBe(0);
  });
}
