// The fault suite's checker and fenced resource (chaos/), on histories whose
// answer is known: a checker that cannot see an overlap would let `npm run
// chaos` pass whatever the stores do.
import { describe, expect, it } from "vitest";
import { check } from "../../chaos/checker";
import { FencedResource } from "../../chaos/fencedResource";
import { History, type Op } from "../../chaos/history";
import { checkDeliveries, type IdempotencyEvent } from "../../chaos/idempotencyWorkload";

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

  it("sees a fence that went backwards, and one that repeated", () => {
    const back = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), release(0, "a", 10, 15), grant(1, "b", 9, 20, 25, 100_020)), []);
    expect(back.fenceBackwards).toBe(1);
    const repeat = check(historyOf(grant(0, "a", 10, 0, 5, 100_000), release(0, "a", 10, 15), grant(1, "b", 10, 20, 25, 100_020)), []);
    expect(repeat.fenceRepeats).toBe(1);
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
