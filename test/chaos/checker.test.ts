// The fault suite's checker and fenced resource (chaos/), on histories whose
// answer is known: a checker that cannot see an overlap would let `npm run
// chaos` pass whatever the stores do.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { check, promisesBroken } from "../../chaos/checker";
import { type StepBackRun, stepBackVerdict } from "../../chaos/clockStepBack";
import { FAULTS, type FaultRun } from "../../chaos/faults";
import { FencedResource } from "../../chaos/fencedResource";
import { History, type Op } from "../../chaos/history";
import { type Resources, startResources } from "../../chaos/resources";
import { checkDeliveries, type IdempotencyEvent } from "../../chaos/idempotencyWorkload";
import { socketWaitersVerdict } from "../../chaos/workload";

const grant = (client: number, token: string, fence: number, invokedAt: number, completedAt: number, storeStart: number): Op => ({
  client,
  op: "acquire",
  token,
  invokedAt,
  completedAt,
  outcome: { kind: "granted", token, fence, ttlMs: 1000, expiresAt: storeStart + 1000 },
});
const release = (client: number, token: string, invokedAt: number, completedAt: number): Op => ({
  client,
  op: "release",
  token,
  invokedAt,
  completedAt,
  outcome: { kind: "ok" },
});
const historyOf = (...ops: Op[]) => {
  const h = new History();
  for (const o of ops) h.record(o);
  return h;
};

describe("the fault suite's checker", () => {
  it("sees two holders: B granted inside A's lease, before A asked to release", () => {
    const r = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), grant(1, "b", 11, 200, 205, 100_300), release(0, "a", 400, 405)), []);
    expect(r.grants).toBe(2);
    expect(r.overlaps).toBe(1);
    expect(r.overlapMaxMs).toBe(700);
    expect(r.clientOverlaps).toBe(1);
  });

  it("sees none when A asked to release before B's grant came back (the store may have applied it first)", () => {
    const r = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), release(0, "a", 100, 150), grant(1, "b", 11, 120, 160, 100_140)), []);
    expect(r.overlaps).toBe(0);
    expect(r.clientOverlaps).toBe(0);
  });

  it("sees an overlap only the clients lived through when the store's clock jumped forward", () => {
    // B's store time is 30 s on: A's lease is over there, not in A's own clock.
    const r = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), grant(1, "b", 11, 200, 205, 130_200), release(0, "a", 400, 405)), []);
    expect(r.overlaps).toBe(0);
    expect(r.clientOverlaps).toBe(1);
  });

  it("sees two holders whatever order the answers came back in: the later grant answered first and released before the other's answer", () => {
    // Store: A granted at 100_000, B at 100_300 while A held. B's answer came back first (205), B released (300),
    // and only then did A's answer arrive (500).
    const r = check(historyOf(grant(1, "b", 11, 200, 205, 100_300), release(1, "b", 300, 305), grant(0, "a", 10, 0, 500, 100_000)), []);
    expect(r.overlaps).toBe(1);
  });

  it("sees two holders across a store clock that went back, by the clients' view, where store times cannot order them", () => {
    // B asked after A's grant came back, yet its store time is 30 s earlier: store time cannot tell; both held at once.
    const r = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), grant(1, "b", 11, 200, 205, 70_200), release(0, "a", 400, 405)), []);
    expect(r.overlaps).toBe(1);
    expect(r.clientOverlaps).toBe(1);
    // The same, with A released before B's grant came back: no overlap.
    const ok = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), release(0, "a", 100, 105), grant(1, "b", 11, 200, 205, 70_200)), []);
    expect(ok.overlaps).toBe(0);
  });

  it("counts a quorum's lease from its grant's answer (its expiresAt less ttlMs is no grant time): an acquire sent before the end, answered after, is no overlap", () => {
    // Quorum times are the caller's clock (suite time + 1_000_000 here); validity 988 ms of a 1000 ms TTL.
    const quorumGrant = (client: number, token: string, fence: number, invokedAt: number, completedAt: number): Op => ({
      client,
      op: "acquire",
      token,
      invokedAt,
      completedAt,
      outcome: { kind: "granted", token, fence, ttlMs: 1000, expiresAt: 1_000_000 + invokedAt + 988, storeStart: 1_000_000 + completedAt },
    });
    // A's lease is promised until 1_000_988; B was sent at 980 and answered at 1010, after it.
    const after = check(historyOf(quorumGrant(0, "a", 10, 0, 20), quorumGrant(1, "b", 11, 980, 1010)), []);
    expect(after.overlaps).toBe(0);
    // B answered at 950, inside A's promised lease: two holders by the quorum's own times.
    const inside = check(historyOf(quorumGrant(0, "a", 10, 0, 20), quorumGrant(1, "b", 11, 930, 950)), []);
    expect(inside.overlaps).toBe(1);
  });

  it("follows heartbeats: a grant after the first end but inside the extended lease is an overlap", () => {
    const heartbeat = (token: string, at: number, expiresAt: number): Op => ({
      client: 0,
      op: "heartbeat",
      token,
      invokedAt: at,
      completedAt: at + 5,
      outcome: { kind: "ok", expiresAt, ttlMs: 1000 },
    });
    const extended = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), heartbeat("a", 800, 101_800), grant(1, "b", 11, 1200, 1205, 101_200)), []);
    expect(extended.overlaps).toBe(1);
    const lapsed = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), grant(1, "b", 11, 1200, 1205, 101_200)), []);
    expect(lapsed.overlaps).toBe(0);
  });

  it("counts stale writes the resource accepted because the newer holder had not written yet", () => {
    const history = historyOf(grant(0, "a", 10, 0, 5, 100_000), grant(1, "b", 11, 1200, 1205, 101_200));
    const resource = new FencedResource();
    resource.write(0, 10, 100); // A, while it held
    resource.write(0, 10, 1300); // A again, paused past its lease: B (fence 11) was granted at 1205 but had not written
    resource.write(1, 11, 1400);
    resource.write(0, 10, 1500); // refused now
    expect(check(history, resource.log)).toMatchObject({ writesAccepted: 3, writesRefused: 1, staleWritesAccepted: 1, acceptedOutOfOrder: 0 });
  });

  it("measures how long the lock stood still, and counts 503s (with their p99) and hung requests", () => {
    const unavailable = (at: number, took: number): Op => ({
      client: 2,
      op: "acquire",
      invokedAt: at,
      completedAt: at + took,
      outcome: { kind: "unavailable" },
    });
    const hung: Op = { client: 3, op: "acquire", invokedAt: 50, completedAt: 9050, outcome: { kind: "hung" } };
    const r = check(
      historyOf(grant(0, "a", 10, 0, 5, 100_000), unavailable(10, 300), unavailable(20, 1900), hung, grant(1, "b", 11, 3000, 3005, 103_000)),
      [],
      {
        start: 0,
        end: 4000,
      },
    );
    expect(r.longestGapMs).toBe(3000);
    expect(r).toMatchObject({ unavailable: 2, unavailableP99Ms: 1900, hung: 1, grants: 2 });
  });

  it("sees a fence that went backwards, and one that repeated", () => {
    const back = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), release(0, "a", 10, 15), grant(1, "b", 9, 20, 25, 100_020)), []);
    expect(back.fenceBackwards).toBe(1);
    const repeat = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), release(0, "a", 10, 15), grant(1, "b", 10, 20, 25, 100_020)), []);
    expect(repeat.fenceRepeats).toBe(1);
  });

  it("judges each resource on its own order, and a stale or out-of-order write at any one breaks a promise under every fault", () => {
    const history = historyOf(grant(0, "a", 10, 0, 5, 100_000), grant(1, "b", 11, 1200, 1205, 101_200));
    const w = (resource: string, client: number, fence: number, at: number, accepted = true) => ({ resource, client, fence, at, accepted });
    // Each in order on its own; read as one log, Postgres's first write (10) would follow Redis's 11.
    const inOrder = [
      w("redis", 0, 10, 100),
      w("redis", 1, 11, 1400),
      w("postgres", 0, 10, 100),
      w("postgres", 1, 11, 1400),
      w("postgres", 0, 10, 1300, false),
    ];
    const fine = check(history, inOrder);
    expect(fine.resources).toEqual({
      redis: { writesAccepted: 2, writesRefused: 0, staleWritesAccepted: 0, acceptedOutOfOrder: 0 },
      postgres: { writesAccepted: 2, writesRefused: 1, staleWritesAccepted: 0, acceptedOutOfOrder: 0 },
    });
    expect(fine).toMatchObject({ writesAccepted: 4, writesRefused: 1, staleWritesAccepted: 0, acceptedOutOfOrder: 0 });
    expect(promisesBroken(fine, true)).toEqual([]);
    // Postgres took A's write sent after B's grant came back (1300 > 1205), after B's: stale, and out of order.
    const bad = check(history, [...inOrder.slice(0, 4), w("postgres", 0, 10, 1300)]);
    expect(bad.resources.postgres).toEqual({ writesAccepted: 3, writesRefused: 0, staleWritesAccepted: 1, acceptedOutOfOrder: 1 });
    expect(bad.resources.redis.staleWritesAccepted).toBe(0);
    expect(promisesBroken(bad, true)).toEqual([
      expect.stringMatching(/^1 stale writes accepted by postgres/),
      expect.stringMatching(/^1 writes accepted out of fence order by postgres/),
    ]);
    // Stale but in order (nobody newer had written yet): still broken, data loss or not.
    const staleOnly = check(history, [w("redis", 0, 10, 1300), w("redis", 1, 11, 1400)]);
    expect(staleOnly).toMatchObject({ staleWritesAccepted: 1, acceptedOutOfOrder: 0 });
    expect(promisesBroken(staleOnly, true)).toEqual([expect.stringMatching(/^1 stale writes accepted by redis/)]);
  });

  it("the resource refuses a write below the highest fence it accepted; the checker counts accepted writes out of order in any log", () => {
    const resource = new FencedResource();
    expect(resource.write(0, 10, 1)).toBe(true);
    expect(resource.write(0, 10, 2)).toBe(true); // the same holder again
    expect(resource.write(1, 9, 3)).toBe(false);
    expect(check(new History(), resource.log)).toMatchObject({ writesAccepted: 2, writesRefused: 1, acceptedOutOfOrder: 0 });
    const unfenced = [
      { client: 0, fence: 10, at: 1, accepted: true },
      { client: 1, fence: 9, at: 2, accepted: true },
    ];
    expect(check(new History(), unfenced).acceptedOutOfOrder).toBe(1);
  });
});

describe("the faults' own promises", () => {
  const fault = (name: string) => {
    const f = FAULTS.find((x) => x.name.startsWith(name));
    if (!f?.verify) throw new Error(`no fault "${name}" with promises of its own`);
    return f.verify;
  };
  const runOf = (ops: Op[], notes: string[] = []): FaultRun =>
    ({
      lab: undefined,
      pausing: false,
      disconnecting: false,
      notes,
      failures: [],
      history: historyOf(...ops),
      window: { from: 1000, to: 5000 },
    }) as unknown as FaultRun;
  const op = (at: number, kind: "unavailable" | "busy"): Op => ({
    client: 0,
    op: "acquire",
    invokedAt: at,
    completedAt: at + 100,
    outcome: { kind },
  });

  it("two of three databases down: every call made meanwhile is a 503, not just some", () => {
    const verify = fault("quorum: two of three");
    const all = runOf([op(1500, "unavailable"), op(2500, "unavailable")]);
    expect(verify(check(all.history, []), all)).toEqual([]);
    const one = runOf([op(1500, "unavailable"), op(2500, "busy")]);
    expect(verify(check(one.history, []), one)).toEqual([expect.stringContaining("1 of 2 calls")]);
    const none = runOf([op(500, "busy")]);
    expect(verify(check(none.history, []), none)).toEqual([expect.stringContaining("no call was made")]);
  });

  it("one of three down: no 503 at all; holders pausing: some stale write refused; waiters hanging up: some did", () => {
    const oneDown = runOf([op(1500, "unavailable")]);
    expect(fault("quorum: one of three")(check(oneDown.history, []), oneDown)).toHaveLength(1);
    const pausing = fault("holders pausing");
    const refusedOne = check(new History(), [{ client: 0, fence: 1, at: 1, accepted: false }]);
    // The late write taken where no grant claims (in memory), refused where each does: what the fault is for.
    const gapTried = { ...runOf([]), unclaimed: { ...refusedOne, staleWritesAccepted: 1 } };
    expect(pausing(refusedOne, gapTried)).toEqual([]);
    expect(pausing(check(new History(), []), gapTried)).toEqual([expect.stringContaining("no stale write was refused")]);
    expect(pausing(refusedOne, runOf([]))).toEqual([expect.stringContaining("the gap claim on grant closes was not tried")]);
    const hangUp = fault("waiters that hang up");
    expect(hangUp(check(new History(), []), runOf([], ["12 waiters hung up"]))).toEqual([]);
    expect(hangUp(check(new History(), []), runOf([], ["0 waiters hung up"]))).toHaveLength(1);
  });
});

describe("the socket waiters' confirmation", () => {
  it("counts only sockets that opened and whose close completed; a close the service never answers is a broken promise", () => {
    expect(socketWaitersVerdict({ opened: 60, gone: 60, offered: 5 }).failures).toEqual([]);
    expect(socketWaitersVerdict({ opened: 0, gone: 0, offered: 0 }).failures).toEqual([expect.stringContaining("the fault did not happen")]);
    expect(socketWaitersVerdict({ opened: 60, gone: 0, offered: 0 }).failures).toEqual([
      expect.stringContaining("the fault did not happen"),
      expect.stringContaining("60 of 60 socket waiters' closes were never answered"),
    ]);
  });
});

describe("the clock step-back faults' own promises", () => {
  const ttlGrant = (client: number, token: string, fence: number, invokedAt: number, completedAt: number, storeStart: number, ttlMs: number): Op => ({
    client,
    op: "acquire",
    token,
    invokedAt,
    completedAt,
    outcome: { kind: "granted", token, fence, ttlMs, expiresAt: storeStart + ttlMs },
  });
  const busy = (client: number, at: number): Op => ({ client, op: "acquire", invokedAt: at, completedAt: at + 5, outcome: { kind: "busy" } });

  it("the holder that vanished: the lock standing still about a TTL holds, standing still the step's length breaks it", () => {
    const verify = FAULTS.find((f) => f.name.includes("while the holder had vanished"))?.verify;
    if (!verify) throw new Error("no vanished-holder clock fault with promises of its own");
    const window = { start: 0, end: 10_000 };
    // Grants every ~1.2 s across the step (store times 30 s back after it): the lease ended within its TTL of the step.
    const held = historyOf(
      ...[0, 1200, 2400, 3700, 5000, 6200, 7400, 8600, 9800].map((t, i) =>
        grant(i % 4, `t${i}`, 10 + i, t, t + 5, 100_000 + t - (t > 3000 ? 30_000 : 0)),
      ),
    );
    expect(verify(check(held, [], window), {} as FaultRun)).toEqual([]);
    // The vanished holder's lease kept the lock 9.2 s, until it came back: the step stretched it.
    const stretched = historyOf(grant(0, "a", 10, 0, 5, 100_000), grant(1, "b", 11, 9200, 9205, 79_200), grant(2, "c", 12, 9700, 9705, 79_700));
    expect(verify(check(stretched, [], window), {} as FaultRun)).toEqual([expect.stringContaining("stood still 9200 ms")]);
  });

  const stepRun = (waiter: boolean, ...ops: Op[]): StepBackRun => ({ waiter, steppedAt: 305, endAt: 12_000, history: historyOf(...ops) });
  // A 2 s lease granted at 0..5 (store 100_000), the clock stepped back 30 s at 305.
  const holder = ttlGrant(0, "h", 10, 0, 5, 100_000, 2000);

  it("nobody calls after the step: the lease may stand until the first call plus its TTL, not longer", () => {
    // First call at 4000 (busy), try-locks every 20 ms, the next grant at 6030: 4030 ms past the TTL, bound 4005 ms.
    const tries = Array.from({ length: 101 }, (_, i) => busy(1, 4000 + 20 * i));
    const held = stepRun(false, holder, ...tries, ttlGrant(1, "n", 11, 6025, 6030, 76_025, 2000));
    expect(stepBackVerdict(held).failures).toEqual([]);
    expect(stepBackVerdict(held).notes.join(" ")).toMatch(/outlived its TTL by 3995-4030 ms \(.* at most 4005 ms\)/);
    // The lease stood 2 s longer still: past the bound.
    const late = stepRun(false, holder, ...tries, busy(1, 6100), ttlGrant(1, "n", 11, 8025, 8030, 78_025, 2000));
    expect(stepBackVerdict(late).failures).toEqual([expect.stringContaining("outlived its TTL by at least 4095 ms")]);
    // No grant at all before the scenario gave up (the whole step).
    expect(stepBackVerdict(stepRun(false, holder, ...tries)).failures).toEqual([expect.stringContaining("no grant within")]);
    // The first call after the step found the lock free: the step stretched nothing, so nothing was tested.
    const free = stepRun(false, holder, ttlGrant(1, "n", 11, 4000, 4005, 74_000, 2000));
    expect(stepBackVerdict(free).failures).toEqual([expect.stringContaining("nothing tested")]);
    // Someone called right after the step, inside the TTL: not the quiet this row is about.
    const early = stepRun(false, holder, busy(1, 1000), ttlGrant(1, "n", 11, 3000, 3005, 73_000, 2000));
    expect(stepBackVerdict(early).failures).toEqual([expect.stringContaining("nothing tested")]);
  });

  it("a waiter queued before the step: about one TTL past the lease's TTL, not more", () => {
    const waiter = (completedAt: number) => ttlGrant(1, "w", 11, 100, completedAt, 100_000 + completedAt - 30_000, 2000);
    expect(stepBackVerdict(stepRun(true, holder, waiter(4016))).failures).toEqual([]);
    expect(stepBackVerdict(stepRun(true, holder, waiter(6000))).failures).toEqual([expect.stringContaining("more than one TTL")]);
    expect(stepBackVerdict(stepRun(true, holder, waiter(2010))).failures).toEqual([expect.stringContaining("nothing tested")]);
    expect(stepBackVerdict({ ...stepRun(true, holder, waiter(4016)), waiterSeenInLine: false }).failures).toEqual([
      expect.stringContaining("not in the lock's line"),
    ]);
  });

  it("the rows' verify reads the scenario: broken without it, and by a lease that outlived the bound", () => {
    const verify = FAULTS.find((f) => f.name.includes("a waiter queued before the step"))?.verify;
    if (!verify) throw new Error("no clock fault with a waiter queued before the step");
    const runWith = (stepBack?: StepBackRun) => ({ stepBack }) as FaultRun;
    const empty = check(new History(), []);
    expect(verify(empty, runWith())).toEqual(["the step-back scenario did not run"]);
    expect(verify(empty, runWith(stepRun(true, holder, ttlGrant(1, "w", 11, 100, 4016, 74_016, 2000))))).toEqual([]);
    expect(verify(empty, runWith(stepRun(true, holder, ttlGrant(1, "w", 11, 100, 7000, 77_000, 2000))))).toHaveLength(1);
  });
});

describe("the fault suite's idempotency check", () => {
  const ev = (op: "begin" | "complete", invokedAt: number, outcome: IdempotencyEvent["outcome"], result?: string): IdempotencyEvent => ({
    key: "k",
    client: 0,
    op,
    invokedAt,
    completedAt: invokedAt + 5,
    outcome,
    result,
  });

  it("a key started again after its result was stored is a lost result; a replay of another result is a wrong one", () => {
    const lost = checkDeliveries([
      ev("begin", 0, { kind: "started", token: "t1" }),
      ev("complete", 40, { kind: "ok" }, "first"),
      ev("begin", 100, { kind: "completed", response: { result: "first" } }),
      ev("begin", 200, { kind: "started", token: "t2" }),
      ev("begin", 300, { kind: "completed", response: { result: "second" } }),
    ]);
    expect(lost).toEqual({ keys: 1, completed: 1, replays: 2, lostResults: 1, wrongReplays: 1 });
  });

  it("a begin sent before the result was stored may start the work (it is not a loss)", () => {
    const ok = checkDeliveries([
      ev("begin", 0, { kind: "started", token: "t1" }),
      ev("begin", 10, { kind: "busy" }),
      ev("complete", 40, { kind: "ok" }, "first"),
    ]);
    expect(ok.lostResults).toBe(0);
  });
});

describe("the suite's real resources (a Redis list and a Postgres table behind holdfast/fence)", () => {
  // The stack's Redis behind the Upstash gateway, and PGlite: what `npm run chaos` writes to.
  let resources: Resources;
  beforeAll(async () => {
    resources = await startResources({ url: inject("upstashUrl"), token: inject("upstashToken") });
  });
  afterAll(() => resources.close());

  it("claimed on grant, both refuse the paused holder's late write the in-memory resource takes; the checker reads what each accepted", async () => {
    const name = `chaos-test-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
    const history = historyOf(grant(0, "a", 10, 0, 5, 100_000), grant(1, "b", 11, 1200, 1205, 101_200));
    const memory = new FencedResource();
    const write = async (client: number, fence: number, at: number) => {
      memory.write(client, fence, at);
      await resources.write(name, client, fence, at);
    };
    const claim = resources.claimFor(name);
    await claim.store.claim(claim.resources[0], 10); // A's grant
    await write(0, 10, 100); // A, while it held
    await claim.store.claim(claim.resources[0], 11); // B's grant claims before it is answered (1205)
    await write(0, 10, 1300); // A, paused past its lease, before B's first write
    await write(1, 11, 1400);
    const real = check(history, await resources.log(name));
    const each = { writesAccepted: 2, writesRefused: 1, staleWritesAccepted: 0, acceptedOutOfOrder: 0 };
    expect(real.resources).toEqual({ redis: each, postgres: each });
    expect(promisesBroken(real, false)).toEqual([]);
    // Without a claim the late write is taken: the gap claim on grant closes.
    expect(check(history, memory.log)).toMatchObject({ writesAccepted: 3, staleWritesAccepted: 1 });
  });
});
