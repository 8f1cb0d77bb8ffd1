import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AlarmTimers, SHORT_TIMER_MS } from "../../src/lockObject/timers";

// A lock object's long timers (src/lockObject/timers.ts): run from its alarm, which is set for next(). A line
// of 10,000 socket waiters has a deadline each, and next() is asked several times per handoff.
describe("AlarmTimers", () => {
  const LONG = SHORT_TIMER_MS + 1000;
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("next() is the earliest timer not cancelled; the alarm runs the due ones in time order, each once", () => {
    const woken: number[] = [];
    const timers = new AlarmTimers((at) => woken.push(at));
    const ran: string[] = [];
    const t0 = Date.now();
    timers.after(LONG + 300, () => ran.push("c"));
    const cancelA = timers.after(LONG + 100, () => ran.push("a"));
    timers.after(LONG + 200, () => ran.push("b"));
    expect(woken).toEqual([t0 + LONG + 300, t0 + LONG + 100, t0 + LONG + 200]);
    expect(timers.next()).toBe(t0 + LONG + 100);
    cancelA();
    expect(timers.next()).toBe(t0 + LONG + 200);
    timers.runDue(t0 + LONG + 250);
    expect(ran).toEqual(["b"]);
    expect(timers.next()).toBe(t0 + LONG + 300);
    timers.runDue(t0 + LONG + 1000);
    timers.runDue(t0 + LONG + 2000);
    expect(ran).toEqual(["b", "c"]);
    expect(timers.next()).toBeUndefined();
  });

  it("a short timer is a setTimeout, not the alarm's", () => {
    const timers = new AlarmTimers(() => {});
    timers.after(SHORT_TIMER_MS, () => {});
    expect(timers.next()).toBeUndefined();
  });

  it("10,000 deadlines with most cancelled (set again on every handoff): next() and the alarm still see only the live ones", () => {
    const timers = new AlarmTimers(() => {});
    const t0 = Date.now();
    const ran: number[] = [];
    const cancels = Array.from({ length: 10_000 }, (_, i) => timers.after(LONG + i, () => ran.push(i)));
    // The first 9,000 leave the line, in order and then some out of order: the cancelled outnumber the rest.
    for (let i = 0; i < 9_000; i++) cancels[i === 0 ? 8_999 : i === 8_999 ? 0 : i]();
    expect(timers.next()).toBe(t0 + LONG + 9_000);
    cancels[9_500]();
    timers.runDue(t0 + LONG + 20_000);
    expect(ran).toHaveLength(999);
    expect(ran[0]).toBe(9_000);
    expect(ran.includes(9_500)).toBe(false);
    expect(ran.every((at, i) => i === 0 || ran[i - 1] < at)).toBe(true);
    expect(timers.next()).toBeUndefined();
  });
});
