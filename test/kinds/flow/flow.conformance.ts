import { createExecutionContext } from "cloudflare:test";
import { expect, it } from "vitest";
import worker from "../../../src/worker";
import { api, envFor, KEY_A, KEY_ADMIN, sleep, type StoreKind, uniqueName } from "../../support/workers/api.js";
import { eventually } from "../../support/workers/lockObjectHelpers.js";
import { overRate } from "./windows.js";

/**
 * Every flow-limit behaviour of the contract (docs/API.md, "Flow limit"),
 * run against both stores (test/conformance/index.ts): slots under
 * concurrency, starts under the rate's window (checked over the grant times
 * the store reports), the limit in force, bad input, FIFO waits over HTTP and
 * a wait socket woken when the window opens with no release, lapses.
 */
export function flowConformance(kind: StoreKind) {
  const { post, get } = api(kind);
  const path = (name: string, op = "") => `/v1/flows/${name}${op ? `/${op}` : ""}`;
  const acquire = (name: string, body: Record<string, unknown>) => post(path(name, "acquire"), body);
  const release = (name: string, token: string) => post(path(name, "release"), { token });
  const state = async (name: string) => (await get(path(name))).body;
  const untilWaiters = (name: string, n: number) =>
    eventually(
      () => state(name),
      (s) => s.waiters === n,
    );

  /** A wait socket on the flow, its acquire sent, collecting what it is told. */
  async function socketWaiter(name: string, body: Record<string, unknown>) {
    const res = await worker.fetch(
      new Request(`http://holdfast.test${path(name, "wait")}`, { headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` } }),
      envFor(kind),
      createExecutionContext(),
    );
    const ws = res.webSocket as WebSocket;
    ws.accept();
    const messages: any[] = [];
    ws.addEventListener("message", (e) => {
      messages.push(JSON.parse(String(e.data)));
    });
    ws.send(JSON.stringify({ type: "acquire", ...body }));
    return { ws, messages };
  }

  it("inspect of an unused flow: no limit, nothing held, no starts, nobody waiting", async () => {
    const name = uniqueName("flow-free");
    const res = await get(path(name));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name, limit: null, held: 0, holderLabels: [], expiresAt: null, starts: null, nextStartAt: null, waiters: 0 });
  });

  it("grants a slot as a lease: token, fence, the store's expiry and grant time, slots held and starts in the window", async () => {
    const name = uniqueName("flow-grant");
    const before = Date.now();
    const res = await acquire(name, { concurrency: 4, rate: { count: 120, perMs: 60_000 }, ttlMs: 5000, holder: "job-1" });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["expiresAt", "fence", "held", "name", "startedAt", "starts", "token", "ttlMs"]);
    expect(res.body).toMatchObject({ name, ttlMs: 5000, held: 1, starts: 1 });
    expect(res.body.token).toMatch(/^hf_[A-Za-z0-9_-]{24}$/);
    expect(res.body.startedAt).toBeGreaterThan(before - 1000);
    expect(res.body.expiresAt).toBe(res.body.startedAt + 5000);
    expect(await state(name)).toEqual({
      name,
      limit: { concurrency: 4, rate: { count: 120, perMs: 60_000 } },
      held: 1,
      holderLabels: ["job-1"],
      expiresAt: res.body.expiresAt,
      starts: 1,
      nextStartAt: null,
      waiters: 0,
    });
    const hb = await post(path(name, "heartbeat"), { token: res.body.token, ttlMs: 8000 });
    expect(hb.status).toBe(200);
    expect(hb.body).toMatchObject({ ttlMs: 8000, fence: res.body.fence });
    expect(await release(name, res.body.token)).toMatchObject({ status: 200, body: { released: true, held: 0 } });
    expect((await release(name, res.body.token)).body.error).toBe("lease_lost");
    // Released, but its start stays in the window.
    expect(await state(name)).toMatchObject({ held: 0, starts: 1 });
  });

  it("concurrency: of many tries at once exactly N are granted; the rest 409 locked, told when a slot frees", async () => {
    const name = uniqueName("flow-conc");
    const results = await Promise.all(Array.from({ length: 16 }, () => acquire(name, { concurrency: 4, ttlMs: 5000 })));
    const granted = results.filter((r) => r.status === 200);
    expect(granted).toHaveLength(4);
    expect(granted.map((r) => r.body.held).sort()).toEqual([1, 2, 3, 4]);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect([r.status, r.body.error]).toEqual([409, "locked"]);
      expect(r.body.message).toContain("concurrency 4");
      expect(r.body.retryAfterMs).toBeGreaterThan(0);
      expect(r.body.retryAfterMs).toBeLessThanOrEqual(5000);
    }
    await release(name, granted[0].body.token);
    expect((await acquire(name, { concurrency: 4, ttlMs: 5000 })).status).toBe(200);
  });

  it("rate: of many tries at once exactly R are granted, released or not; the rest 409 locked, told when the window admits one", async () => {
    const name = uniqueName("flow-rate");
    const rate = { count: 5, perMs: 3000 };
    const results = await Promise.all(Array.from({ length: 16 }, () => acquire(name, { rate, ttlMs: 5000 })));
    const granted = results.filter((r) => r.status === 200);
    expect(granted).toHaveLength(5);
    for (const g of granted) await release(name, g.body.token);
    const firstStart = Math.min(...granted.map((g) => g.body.startedAt));
    const turned = await acquire(name, { rate, ttlMs: 5000 });
    expect([turned.status, turned.body.error]).toEqual([409, "locked"]);
    expect(turned.body.message).toContain("5 starts in the last 3000 ms");
    expect(turned.body.retryAfterMs).toBeLessThanOrEqual(3000);
    expect(await state(name)).toMatchObject({ held: 0, starts: 5, nextStartAt: firstStart + 3000 });
  });

  it("another limit for the same key is 409 limit_mismatch naming both, with or without waitMs, and changes nothing", async () => {
    const name = uniqueName("flow-mismatch");
    const a = (await acquire(name, { concurrency: 4, rate: { count: 120, perMs: 60_000 }, ttlMs: 5000 })).body;
    const before = await state(name);
    for (const body of [
      { concurrency: 5, rate: { count: 120, perMs: 60_000 }, ttlMs: 5000 },
      { concurrency: 4, ttlMs: 5000, waitMs: 5000 },
    ]) {
      const res = await acquire(name, body);
      expect([res.status, res.body.error]).toEqual([409, "limit_mismatch"]);
      expect(res.body.message).toContain("in force is concurrency 4, 120 per 60000 ms");
      expect(res.body.message).toContain(`this call asked concurrency ${body.concurrency}`);
    }
    expect(await state(name)).toEqual(before);
    expect((await release(name, a.token)).status).toBe(200);
  });

  it("bad input is a 400 naming the field, and writes nothing", async () => {
    const name = uniqueName("flow-bad");
    const rate = (count: unknown, perMs: unknown) => ({ rate: { count, perMs } });
    for (const [body, field] of [
      [{ concurrency: 0 }, "concurrency"],
      [{ concurrency: 10_001 }, "concurrency"],
      [{ concurrency: 2.5 }, "concurrency"],
      [rate(0, 1000), "count"],
      [rate(10_001, 1000), "count"],
      [rate(10, 999), "perMs"],
      [rate(10, 86_400_001), "perMs"],
      [rate(10, 1500.5), "perMs"],
      [{ rate: { count: 10 } }, "perMs"],
      [{}, "concurrency"],
    ] as const) {
      const res = await acquire(name, { ...body, ttlMs: 5000 });
      expect([JSON.stringify(body), res.status, res.body.error]).toEqual([JSON.stringify(body), 400, "invalid_body"]);
      expect(res.body.message).toContain(field);
    }
    expect(await state(name)).toMatchObject({ limit: null, held: 0, starts: null });
  });

  it("waiters are granted first come, first served, each when the window admits it: no release, no polling", async () => {
    const name = uniqueName("flow-fifo");
    // A window long enough that b joins the line before it admits a, on a busy runner too (at 1.5 s, a was
    // granted first and the line never held two).
    const limit = { rate: { count: 1, perMs: 3000 } };
    const first = (await acquire(name, { ...limit, ttlMs: 30_000 })).body;
    const order: string[] = [];
    const wait = (label: string) =>
      acquire(name, { ...limit, ttlMs: 30_000, waitMs: 15_000 }).then((r) => {
        order.push(label);
        return r;
      });
    const a = wait("a");
    await untilWaiters(name, 1);
    const b = wait("b");
    await untilWaiters(name, 2);
    // A try is turned away while they wait, whatever the window says (no barging).
    expect((await acquire(name, { ...limit, ttlMs: 30_000 })).status).toBe(409);
    const [ra, rb] = await Promise.all([a, b]);
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect(order).toEqual(["a", "b"]);
    expect(rb.body.fence).toBeGreaterThan(ra.body.fence);
    // Nobody released: each start came when the window admitted it, one window apart.
    expect(overRate([first.startedAt, ra.body.startedAt, rb.body.startedAt], limit.rate)).toEqual([]);
    expect(await state(name)).toMatchObject({ held: 3, waiters: 0 });
  });

  it("a wait socket is granted when the window admits its start, with no release", async () => {
    const name = uniqueName("flow-socket");
    const limit = { concurrency: 5, rate: { count: 1, perMs: 1500 } };
    const first = (await acquire(name, { ...limit, ttlMs: 30_000 })).body;
    const s = await socketWaiter(name, { ...limit, ttlMs: 30_000, waitMs: 15_000 });
    const granted = await eventually(
      () => s.messages.find((m) => m.type === "granted"),
      (m) => m !== undefined,
    );
    expect(granted.grant.startedAt).toBeGreaterThanOrEqual(first.startedAt + 1500);
    expect(granted.grant).toMatchObject({ held: 2, starts: 1 });
    s.ws.close();
  });

  it("is listed while held, and an operator's force release frees its holders (their starts stay counted)", async () => {
    const name = uniqueName("flow-force");
    const limit = { concurrency: 2, rate: { count: 10, perMs: 60_000 } };
    await acquire(name, { ...limit, ttlMs: 30_000, holder: "sync-a" });
    await acquire(name, { ...limit, ttlMs: 30_000, holder: "sync-b" });
    const listed = (await get(`/v1/flows?prefix=${name}`)).body.items;
    expect(listed).toEqual([expect.objectContaining({ name, held: 2, starts: 2, holderLabels: ["sync-a", "sync-b"] })]);
    const forced = await post(path(name, "force-release"), { reason: "wedged", holder: "sync-a" }, { key: KEY_ADMIN });
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ released: 1, holder: "sync-a" });
    expect(await state(name)).toMatchObject({ held: 1, starts: 2, holderLabels: ["sync-b"] });
    expect((await acquire(name, { ...limit, ttlMs: 30_000 })).status).toBe(200);
  });

  it("a lapsed lease frees its slot for the waiter", async () => {
    const name = uniqueName("flow-lapse");
    const limit = { concurrency: 1 };
    const a = (await acquire(name, { ...limit, ttlMs: 400 })).body;
    const b = await acquire(name, { ...limit, ttlMs: 5000, waitMs: 10_000 });
    expect(b.status).toBe(200);
    expect(b.body.startedAt).toBeGreaterThanOrEqual(a.expiresAt);
  });

  it("many waiting clients: never more than N in flight, never more than R starts in any window, fences rising", async () => {
    const name = uniqueName("flow-many");
    const limit = { concurrency: 2, rate: { count: 4, perMs: 1000 } };
    let inFlight = 0;
    let most = 0;
    const starts: number[] = [];
    const fences: number[] = [];
    const until = Date.now() + 2500;
    const client = async () => {
      while (Date.now() < until) {
        const r = await acquire(name, { ...limit, ttlMs: 5000, waitMs: 5000 });
        if (r.status !== 200) continue;
        inFlight += 1;
        most = Math.max(most, inFlight);
        starts.push(r.body.startedAt);
        fences.push(r.body.fence);
        await sleep(30);
        inFlight -= 1; // counted out before the release is sent: never more than the store granted
        await release(name, r.body.token);
      }
    };
    await Promise.all(Array.from({ length: 8 }, client));
    expect(most).toBeLessThanOrEqual(2);
    expect(starts.length).toBeGreaterThanOrEqual(8); // the rate was reached, more than once
    expect(overRate(starts, limit.rate)).toEqual([]);
    const byStart = starts.map((t, i) => [t, fences[i]]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    expect(byStart.map(([, f]) => f)).toEqual([...fences].sort((x, y) => x - y));
  });
}
