import { expect, it } from "vitest";
import { KEY_B, sleep, type StoreKind, uniqueName } from "../../support/workers/api.js";
import { lockApi } from "./lockApi.js";

/**
 * Every mutex behaviour of the contract, written once and run against both
 * stores (test/conformance/index.ts). A behaviour that differs
 * between stores is a bug in one of them.
 */
export function mutexConformance(kind: StoreKind) {
  const { post, get, path } = lockApi(kind);

  it("grants a free lock with an unguessable token, a fence and the store's expiry", async () => {
    const name = uniqueName("grant");
    const before = Date.now();
    const res = await post(path(name, "acquire"), { ttlMs: 5000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name, ttlMs: 5000, count: 1 });
    expect(Object.keys(res.body).sort()).toEqual(["count", "expiresAt", "fence", "name", "token", "ttlMs"]);
    // >= 128 random bits: 18 bytes base64url after the prefix.
    expect(res.body.token).toMatch(/^hf_[A-Za-z0-9_-]{24}$/);
    expect(Number.isSafeInteger(res.body.fence)).toBe(true);
    expect(res.body.expiresAt).toBeGreaterThan(before + 4000);
    expect(res.body.expiresAt).toBeLessThan(Date.now() + 6000);
  });

  it("answers 409 locked with retryAfterMs and Retry-After while held", async () => {
    const name = uniqueName("busy");
    await post(path(name, "acquire"), { ttlMs: 3000 });
    const res = await post(path(name, "acquire"), { ttlMs: 1000 });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("locked");
    expect(res.body.retryAfterMs).toBeGreaterThan(0);
    expect(res.body.retryAfterMs).toBeLessThanOrEqual(3000);
    expect(res.headers.get("retry-after")).toBe(String(Math.ceil(res.body.retryAfterMs / 1000)));
  });

  it("grants exactly one of many concurrent acquires", async () => {
    const name = uniqueName("race");
    const results = await Promise.all(Array.from({ length: 20 }, () => post(path(name, "acquire"), { ttlMs: 5000 })));
    const granted = results.filter((r) => r.status === 200);
    const locked = results.filter((r) => r.status === 409);
    expect(granted).toHaveLength(1);
    expect(locked).toHaveLength(19);
    for (const r of locked) {
      expect(r.body.error).toBe("locked");
      expect(r.body.retryAfterMs).toBeLessThanOrEqual(5000);
    }
  });

  it("refuses release and heartbeat with a wrong token and changes nothing", async () => {
    const name = uniqueName("wrong");
    const held = (await post(path(name, "acquire"), { ttlMs: 5000 })).body;
    const bad = "hf_AAAAAAAAAAAAAAAAAAAAAAAA";
    const rel = await post(path(name, "release"), { token: bad });
    expect(rel.status).toBe(409);
    expect(rel.body.error).toBe("lease_lost");
    const hb = await post(path(name, "heartbeat"), { token: bad, ttlMs: 60000 });
    expect(hb.status).toBe(409);
    expect(hb.body.error).toBe("lease_lost");
    const state = (await get(path(name))).body;
    expect(state).toMatchObject({ held: true, fence: held.fence, count: 1 });
    expect(state.expiresAt).toBe(held.expiresAt);
  });

  it("heartbeat extends the lease from the store's now, by default by the acquire's ttl", async () => {
    const name = uniqueName("hb");
    const held = (await post(path(name, "acquire"), { ttlMs: 1000 })).body;
    await sleep(50);
    const hb = await post(path(name, "heartbeat"), { token: held.token });
    expect(hb.status).toBe(200);
    expect(Object.keys(hb.body).sort()).toEqual(["expiresAt", "fence", "ttlMs"]);
    expect(hb.body).toMatchObject({ ttlMs: 1000, fence: held.fence });
    expect(hb.body.expiresAt).toBeGreaterThan(held.expiresAt);
    const longer = await post(path(name, "heartbeat"), { token: held.token, ttlMs: 20000 });
    expect(longer.body.ttlMs).toBe(20000);
    expect(longer.body.expiresAt).toBeGreaterThan(held.expiresAt + 15000);
  });

  it("re-enters with the held token: count grows, fence stays, release unwinds by depth", async () => {
    const name = uniqueName("reenter");
    const first = (await post(path(name, "acquire"), { ttlMs: 5000 })).body;
    const again = await post(path(name, "acquire"), { ttlMs: 8000, token: first.token });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ token: first.token, fence: first.fence, count: 2, ttlMs: 8000 });
    expect((await post(path(name, "release"), { token: first.token })).body).toEqual({ released: false, count: 1 });
    expect((await get(path(name))).body).toMatchObject({ held: true, count: 1 });
    expect((await post(path(name, "release"), { token: first.token })).body).toEqual({ released: true, count: 0 });
    expect((await get(path(name))).body).toMatchObject({ held: false, count: 0 });
    const third = await post(path(name, "release"), { token: first.token });
    expect(third.status).toBe(409);
    expect(third.body.error).toBe("lease_lost");
  });

  it("re-entry with a token that no longer holds the lock is lease_lost, not a new grant", async () => {
    const name = uniqueName("stale-reenter");
    const first = (await post(path(name, "acquire"), { ttlMs: 5000 })).body;
    await post(path(name, "release"), { token: first.token });
    const res = await post(path(name, "acquire"), { ttlMs: 5000, token: first.token });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("lease_lost");
    expect((await get(path(name))).body.held).toBe(false);
  });

  it("fences strictly grow across grants, also after a lease expires", async () => {
    const name = uniqueName("fence");
    const fences: number[] = [];
    for (let i = 0; i < 5; i++) {
      const g = (await post(path(name, "acquire"), { ttlMs: 5000 })).body;
      fences.push(g.fence);
      await post(path(name, "release"), { token: g.token });
    }
    const short = (await post(path(name, "acquire"), { ttlMs: 100 })).body;
    fences.push(short.fence);
    await sleep(250);
    const after = await post(path(name, "acquire"), { ttlMs: 5000 });
    expect(after.status).toBe(200);
    fences.push(after.body.fence);
    for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
  });

  it("an expired holder cannot release or extend the next holder's lock", async () => {
    const name = uniqueName("expired");
    const old = (await post(path(name, "acquire"), { ttlMs: 100 })).body;
    await sleep(250);
    const next = (await post(path(name, "acquire"), { ttlMs: 5000 })).body;
    expect(next.token).not.toBe(old.token);
    expect((await post(path(name, "release"), { token: old.token })).body.error).toBe("lease_lost");
    expect((await post(path(name, "heartbeat"), { token: old.token })).body.error).toBe("lease_lost");
    expect((await get(path(name))).body).toMatchObject({ held: true, fence: next.fence });
  });

  it("inspect reports state and never the token", async () => {
    const name = uniqueName("inspect");
    const free = await get(path(name));
    expect(free.status).toBe(200);
    expect(free.body).toEqual({ name, held: false, fence: null, count: 0, ttlMs: 0, expiresAt: null, holder: null, delayedUntil: null, waiters: 0 });
    const held = (await post(path(name, "acquire"), { ttlMs: 5000 })).body;
    const state = await get(path(name));
    expect(state.body).toMatchObject({ name, held: true, fence: held.fence, count: 1, expiresAt: held.expiresAt, waiters: 0 });
    expect(state.body.ttlMs).toBeGreaterThan(4000);
    expect(JSON.stringify(state.body)).not.toContain(held.token);
    await post(path(name, "release"), { token: held.token });
    expect((await get(path(name))).body).toMatchObject({ held: false, fence: held.fence });
  });

  it("keeps namespaces apart: another key can neither see nor release your lock", async () => {
    const name = uniqueName("tenant");
    const mine = (await post(path(name, "acquire"), { ttlMs: 5000 })).body;
    expect((await get(path(name), { key: KEY_B })).body.held).toBe(false);
    const theirs = await post(path(name, "release"), { token: mine.token }, { key: KEY_B });
    expect(theirs.status).toBe(409);
    expect(theirs.body.error).toBe("lease_lost");
    const own = await post(path(name, "acquire"), { ttlMs: 5000 }, { key: KEY_B });
    expect(own.status).toBe(200);
    expect((await get(path(name))).body).toMatchObject({ held: true, fence: mine.fence });
  });

  it("waitMs > 0 gets the lock once the holder releases", async () => {
    const name = uniqueName("wait");
    const held = (await post(path(name, "acquire"), { ttlMs: 5000 })).body;
    const waiting = post(path(name, "acquire"), { ttlMs: 5000, waitMs: 3000 });
    await sleep(200);
    await post(path(name, "release"), { token: held.token });
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.fence).toBeGreaterThan(held.fence);
  });

  it("waitMs that runs out is 409 locked", async () => {
    const name = uniqueName("wait-out");
    await post(path(name, "acquire"), { ttlMs: 5000 });
    const started = Date.now();
    const res = await post(path(name, "acquire"), { ttlMs: 5000, waitMs: 300 });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("locked");
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });
}
