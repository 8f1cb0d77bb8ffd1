import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SharedTimers } from "../../src/lockObject/timers";

// A lock object's short timers (src/lockObject/timers.ts): one setTimeout for all, since workerd lets an
// object have only 10,000 pending at once, and a line of 10,000 waiters needs a deadline each.
describe("SharedTimers", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("runs each timer at its time, earliest first and in the order set when due together", () => {
    const timers = new SharedTimers();
    const ran: string[] = [];
    timers.after(30, () => ran.push("c"));
    timers.after(10, () => ran.push("a"));
    timers.after(20, () => ran.push("b1"));
    timers.after(20, () => ran.push("b2"));
    vi.advanceTimersByTime(9);
    expect(ran).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(ran).toEqual(["a"]);
    vi.advanceTimersByTime(10);
    expect(ran).toEqual(["a", "b1", "b2"]);
    vi.advanceTimersByTime(10);
    expect(ran).toEqual(["a", "b1", "b2", "c"]);
  });

  it("a cancelled timer never runs, and when the earliest is cancelled nothing waits for it", () => {
    const timers = new SharedTimers();
    const ran: string[] = [];
    const cancelA = timers.after(10, () => ran.push("a"));
    const cancelB = timers.after(20, () => ran.push("b"));
    cancelA();
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(15);
    expect(ran).toEqual([]);
    cancelB();
    // Nothing live: no setTimeout left pending (the object may hibernate).
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(100);
    expect(ran).toEqual([]);
  });

  it("20,000 timers pending are one setTimeout, and all of them run in order", () => {
    const timers = new SharedTimers();
    const ran: number[] = [];
    for (let i = 0; i < 20_000; i++) timers.after(1 + ((i * 7919) % 5000), () => ran.push(1 + ((i * 7919) % 5000)));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(5001);
    expect(ran).toHaveLength(20_000);
    expect(ran.every((at, i) => i === 0 || ran[i - 1] <= at)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a timer set from a running timer runs at its own time", () => {
    const timers = new SharedTimers();
    const ran: string[] = [];
    timers.after(10, () => {
      ran.push("first");
      timers.after(5, () => ran.push("second"));
    });
    vi.advanceTimersByTime(10);
    expect(ran).toEqual(["first"]);
    vi.advanceTimersByTime(5);
    expect(ran).toEqual(["first", "second"]);
  });
});
