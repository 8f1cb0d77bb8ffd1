import { expect, it } from "vitest";
import type { FlowAcquireInput, FlowLimit, FlowQueuedHolder } from "../../../src/kinds/flow/types";
import { freshRef, type NewStore, remainingUntil, requestId, SHORT_TTL_MS, timed, tokenOf, untilStore } from "../../contract/support";
import { sleep } from "../../support/workers/api";
import { overRate } from "./windows";

/**
 * The flow limit at the store boundary (FlowOps: lua/flow/*.lua and
 * lua/holders/*.lua against durableFlow.ts and durableHolders.ts): slots under
 * concurrency, starts under the rate's sliding window, the limit in force,
 * retries that count no second start, lapses, the line's admit step, inspect.
 */
export function flowContract(newStore: NewStore): void {
  const take = (token: string, limit: FlowLimit, ttlMs = 5000, extra: Partial<FlowAcquireInput> = {}): FlowAcquireInput => ({
    token,
    ...limit,
    ttlMs,
    watch: false,
    ...extra,
  });
  const queued = (token: string, limit: FlowLimit, markPickup = true): FlowQueuedHolder => ({
    token,
    ...limit,
    ttlMs: 4000,
    watch: false,
    markPickup,
  });
  const release = (token: string) => ({ token, requestId: requestId() });

  it("concurrency: slots are granted while fewer are held, then busy for concurrency until the first lease ends; a release frees one", async () => {
    const store = newStore();
    const ref = freshRef("flow-conc");
    const limit = { concurrency: 2 };
    const a = await store.flow.acquire(ref, take(tokenOf("a"), limit, 3000, { holder: "job-a" }));
    const b = await store.flow.acquire(ref, take(tokenOf("b"), limit, 6000));
    expect(a).toMatchObject({ status: "granted", grant: { held: 1, starts: null, ttlMs: 3000 } });
    expect(b).toMatchObject({ status: "granted", grant: { held: 2, starts: null } });
    if (a.status !== "granted" || b.status !== "granted") return;
    expect(b.grant.fence).toBeGreaterThan(a.grant.fence);
    expect(b.grant.startedAt).toBeGreaterThanOrEqual(a.grant.startedAt);

    const busy = await timed(() => store.flow.acquire(ref, take(tokenOf("c"), limit)));
    expect(busy.value).toEqual({
      status: "busy",
      retryAfterMs: remainingUntil(a.grant.expiresAt, busy.t0, busy.t1),
      queued: false,
      reason: "concurrency",
      current: { holder: "job-a", expiresAt: a.grant.expiresAt },
    });
    expect(await store.flow.release(ref, release(a.grant.token))).toEqual({ status: "ok", held: 1, watched: false, waiters: false });
    expect(await store.flow.acquire(ref, take(tokenOf("d"), limit))).toMatchObject({ status: "granted", grant: { held: 2 } });
  });

  it("rate: at most count grants in the window, releases or not; the next is busy for rate until the oldest start leaves the window", async () => {
    const store = newStore();
    const ref = freshRef("flow-rate");
    const limit = { rate: { count: 2, perMs: 1000 } };
    const first = await store.flow.acquire(ref, take(tokenOf("a"), limit));
    if (first.status !== "granted") throw new Error("not granted");
    expect(first.grant).toMatchObject({ held: 1, starts: 1 });
    await store.flow.release(ref, release(first.grant.token));
    const second = await store.flow.acquire(ref, take(tokenOf("b"), limit));
    expect(second).toMatchObject({ status: "granted", grant: { held: 1, starts: 2 } });

    const busy = await timed(() => store.flow.acquire(ref, take(tokenOf("c"), limit)));
    expect(busy.value).toEqual({
      status: "busy",
      retryAfterMs: remainingUntil(first.grant.startedAt + 1000, busy.t0, busy.t1),
      queued: false,
      reason: "rate",
    });
    expect(await store.flow.inspect(ref)).toEqual({
      limit,
      held: 1,
      holderLabels: [],
      expiresAt: expect.any(Number),
      starts: 2,
      nextStartAt: first.grant.startedAt + 1000,
    });
    const later = await untilStore(
      () => store.flow.acquire(ref, take(tokenOf("d"), limit)),
      (r) => r.status === "granted",
    );
    if (later.status !== "granted") return;
    expect(later.grant.startedAt).toBeGreaterThanOrEqual(first.grant.startedAt + 1000);
  });

  it("both parts: the later of a slot and the window is the retry, named by its reason", async () => {
    const store = newStore();
    const ref = freshRef("flow-both");
    const limit = { concurrency: 1, rate: { count: 1, perMs: 5000 } };
    const a = await store.flow.acquire(ref, take(tokenOf("a"), limit, 1000));
    if (a.status !== "granted") throw new Error("not granted");
    const busy = await timed(() => store.flow.acquire(ref, take(tokenOf("b"), limit)));
    expect(busy.value).toMatchObject({ status: "busy", reason: "rate", retryAfterMs: remainingUntil(a.grant.startedAt + 5000, busy.t0, busy.t1) });
    await store.flow.release(ref, release(a.grant.token));
    expect(await store.flow.acquire(ref, take(tokenOf("c"), limit))).toMatchObject({ status: "busy", reason: "rate" });
  });

  it("another limit is refused naming the one in force, while anyone holds and while starts remain in its window", async () => {
    const store = newStore();
    const ref = freshRef("flow-mismatch");
    const limit = { concurrency: 4, rate: { count: 120, perMs: 60_000 } };
    const a = await store.flow.acquire(ref, take(tokenOf("a"), limit));
    if (a.status !== "granted") throw new Error("not granted");
    expect(await store.flow.acquire(ref, take(tokenOf("b"), { concurrency: 5 }))).toEqual({ status: "limit_mismatch", limit });
    await store.flow.release(ref, release(a.grant.token));
    // Nobody holds, but its start is in the window: the rate counted under this limit still stands.
    expect(await store.flow.acquire(ref, take(tokenOf("c"), { concurrency: 4, rate: { count: 120, perMs: 1000 } }))).toEqual({
      status: "limit_mismatch",
      limit,
    });
    expect((await store.flow.inspect(ref)).limit).toEqual(limit);
  });

  it("a concurrency-only limit stands while anyone holds, and a new one may be set once nobody does", async () => {
    const store = newStore();
    const ref = freshRef("flow-reset");
    const a = await store.flow.acquire(ref, take(tokenOf("a"), { concurrency: 1 }));
    if (a.status !== "granted") throw new Error("not granted");
    await store.flow.release(ref, release(a.grant.token));
    expect(await store.flow.inspect(ref)).toMatchObject({ limit: null, held: 0, starts: null, nextStartAt: null });
    expect(await store.flow.acquire(ref, take(tokenOf("b"), { concurrency: 3 }))).toMatchObject({ status: "granted" });
  });

  it("a retried acquire (its token holds) is answered its own grant again and counts no second start", async () => {
    const store = newStore();
    const ref = freshRef("flow-retry");
    const limit = { rate: { count: 2, perMs: 60_000 } };
    const token = tokenOf("a");
    const first = await store.flow.acquire(ref, take(token, limit));
    const again = await store.flow.acquire(ref, take(token, limit));
    expect(again).toEqual(first);
    expect((await store.flow.inspect(ref)).starts).toBe(1);
    expect(await store.flow.acquire(ref, take(tokenOf("b"), limit))).toMatchObject({ status: "granted", grant: { starts: 2 } });
  });

  it("a lapsed lease frees its slot (its start still counts)", async () => {
    const store = newStore();
    const ref = freshRef("flow-lapse");
    const limit = { concurrency: 1, rate: { count: 5, perMs: 60_000 } };
    expect(await store.flow.acquire(ref, take(tokenOf("a"), limit, SHORT_TTL_MS))).toMatchObject({ status: "granted" });
    expect(await store.flow.acquire(ref, take(tokenOf("b"), limit))).toMatchObject({ status: "busy", reason: "concurrency" });
    const next = await untilStore(
      () => store.flow.acquire(ref, take(tokenOf("c"), limit)),
      (r) => r.status === "granted",
    );
    expect(next).toMatchObject({ status: "granted", grant: { held: 1, starts: 2 } });
  });

  it("admit grants the line in order while the window admits, stops the first it does not (gate: tries are busy for the line), refuses another limit", async () => {
    const store = newStore();
    const ref = freshRef("flow-admit");
    const limit = { rate: { count: 2, perMs: 2000 } };
    const [a, other, b, c] = [tokenOf("a"), tokenOf("x"), tokenOf("b"), tokenOf("c")];
    const step = await timed(() =>
      store.flow.admit(ref, [queued(a, limit, false), queued(other, { concurrency: 9 }), queued(b, limit), queued(c, limit)], false),
    );
    expect(step.value.granted.map((g) => [g.token, g.starts])).toEqual([
      [a, 1],
      [b, 2],
    ]);
    expect(step.value.refused).toEqual([{ token: other, code: "limit_mismatch", message: expect.stringContaining("2 per 2000 ms") }]);
    const startedAt = step.value.granted[0].startedAt;
    expect(step.value).toMatchObject({ reason: "rate", retryAfterMs: remainingUntil(startedAt + 2000, step.t0, step.t1) });
    // c waits in the gate: a try is busy behind it even when the window admits one.
    await untilStore(
      () => store.flow.inspect(ref),
      (s) => s.nextStartAt === null,
    );
    expect(await store.flow.acquire(ref, take(tokenOf("d"), limit))).toMatchObject({ status: "busy", reason: "line", queued: true });
    // Run twice (its answer lost): c is answered its grant again, one start counted.
    const again1 = await store.flow.admit(ref, [queued(c, limit)], false);
    const again2 = await store.flow.admit(ref, [queued(c, limit)], false);
    expect(again1.granted.map((g) => g.token)).toEqual([c]);
    expect(again2.granted.map((g) => [g.token, g.fence])).toEqual(again1.granted.map((g) => [g.token, g.fence]));
    expect((await store.flow.inspect(ref)).starts).toBe(1);
  });

  it("never more than count grants in any window of perMs, over many tries at the store's own grant times", async () => {
    const store = newStore();
    const ref = freshRef("flow-windows");
    const limit = { concurrency: 3, rate: { count: 4, perMs: 1000 } };
    const startedAt: number[] = [];
    const until = Date.now() + 2600;
    while (Date.now() < until) {
      const r = await store.flow.acquire(ref, take(tokenOf("t"), limit, 300));
      if (r.status === "granted") {
        startedAt.push(r.grant.startedAt);
        if (startedAt.length % 2) await store.flow.release(ref, release(r.grant.token)); // others lapse
      } else await sleep(Math.min(r.status === "busy" ? r.retryAfterMs : 50, 50));
    }
    // At least two windows' worth were granted (the rate was reached), and no window held more than the rate.
    expect(startedAt.length).toBeGreaterThanOrEqual(8);
    expect(overRate(startedAt, limit.rate)).toEqual([]);
  });
}
