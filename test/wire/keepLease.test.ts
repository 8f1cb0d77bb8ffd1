// keepLease, the heartbeat loop behind the client's leases, the library's runOnce and the
// idempotency middleware, on fake timers (the clock included), so its timing is exact.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { keepLease, leaseClock } from "../../src/wire/keepLease";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("keepLease", () => {
  it("heartbeats every third of the TTL while the store answers, and never aborts", async () => {
    const beats: number[] = [];
    const start = leaseClock();
    const kept = keepLease({
      ttlMs: 3000,
      since: start,
      heartbeat: async () => {
        beats.push(leaseClock() - start);
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(kept.signal.aborted).toBe(false);
    expect(beats.slice(0, 3)).toEqual([1000, 2000, 3000]);
    kept.stop();
  });

  it("a grant that arrived late (a long wait) is heartbeated before its deadline, not given up", async () => {
    const sentAt = leaseClock();
    await vi.advanceTimersByTimeAsync(2500); // the acquire waited 2.5 s of its 3 s TTL
    let beats = 0;
    const kept = keepLease({
      ttlMs: 3000,
      since: sentAt,
      marginMs: 100,
      heartbeat: async () => {
        beats++;
        return "ok";
      },
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(beats).toBeGreaterThan(0);
    expect(kept.signal.aborted).toBe(false);
    kept.stop();
  });

  it("after a failed heartbeat it tries again in time, and aborts a margin before the deadline when none gets through", async () => {
    const start = leaseClock();
    const attempts: number[] = [];
    const kept = keepLease({
      ttlMs: 3000,
      since: start,
      marginMs: 200,
      heartbeat: async () => {
        attempts.push(leaseClock() - start);
        throw new Error("unreachable");
      },
    });
    let abortedAt = 0;
    kept.signal.addEventListener("abort", () => {
      abortedAt = leaseClock() - start;
    });
    await vi.advanceTimersByTimeAsync(5000);
    expect(abortedAt).toBe(2800);
    expect(kept.signal.reason.message).toMatch(/no heartbeat was confirmed/);
    // Tries came closer together as the deadline neared, several after the first failure.
    expect(attempts.filter((t) => t > 1000 && t < 2800).length).toBeGreaterThanOrEqual(3);
  });

  it("a late confirmation of an old heartbeat never moves the deadline back; lost aborts at once", async () => {
    const start = leaseClock();
    let answer: (r: "ok" | "lost") => void = () => {};
    const kept = keepLease({ ttlMs: 3000, since: start, heartbeat: () => new Promise((r) => (answer = r)) });
    kept.confirmed(start + 2000); // a manual heartbeat sent at 2 s
    await vi.advanceTimersByTimeAsync(1000);
    kept.confirmed(start + 500); // an older one confirmed late: changes nothing
    await vi.advanceTimersByTimeAsync(3500); // past 500 + 3000, before 2000 + 3000
    expect(kept.signal.aborted).toBe(false);
    answer("lost");
    await vi.advanceTimersByTimeAsync(0);
    expect(kept.signal.aborted).toBe(true);
    expect(kept.signal.reason.message).toMatch(/no longer holds/);
  });

  it("stop aborts a heartbeat in flight and leaves no timer behind", async () => {
    let inFlight: AbortSignal | undefined;
    const kept = keepLease({
      ttlMs: 3000,
      since: leaseClock(),
      heartbeat: (signal) => {
        inFlight = signal;
        return new Promise(() => {}); // never answers
      },
    });
    await vi.advanceTimersByTimeAsync(1000);
    kept.stop();
    expect(inFlight?.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    expect(kept.signal.aborted).toBe(false); // stopping is not losing
  });
});
