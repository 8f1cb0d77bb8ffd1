// An isolate's own memory of who flooded a wait socket (src/admission/floodPenalties.ts; docs/API.md, "Flood
// penalty"): the arithmetic, on a fresh box with the clock handed in. What a flooder meets end to end is in
// floodPenalty.test.ts (both stores over TCP) and test/http/waitSocket.workers.test.ts (the Worker's own refusal).
import { describe, expect, it } from "vitest";
import { FloodPenalties, floodRefusal } from "../../src/admission/floodPenalties";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const T0 = 1_800_000_000_000;

describe("an isolate's flood penalties", () => {
  it("refuse a flooder's ids for 1 s, then 2, 4, 8 ... s for each further flood, never more than 60 s", () => {
    const box = new FloodPenalties();
    const ids = ["key:ns/flooder", "address:203.0.113.7"];
    const boxes: number[] = [];
    let now = T0;
    for (let flood = 0; flood < 9; flood++) {
      const until = box.strike(ids, now);
      boxes.push(until - now);
      expect(box.refusedFor(ids, now)).toBe(until - now);
      // Each id alone is refused as long.
      expect(box.refusedFor([ids[1]], now)).toBe(until - now);
      // The next flood comes once this box is over (the flooder could open a socket again).
      now = until;
      expect(box.refusedFor(ids, now)).toBe(0);
    }
    expect(boxes).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60].map((s) => s * SECOND));
  });

  it("refuse only those ids, and only until their box ends", () => {
    const box = new FloodPenalties();
    box.strike(["key:ns/flooder"], T0);
    expect(box.refusedFor(["key:ns/calm"], T0)).toBe(0);
    expect(box.refusedFor(["key:other/flooder"], T0)).toBe(0);
    expect(box.refusedFor(["key:ns/calm", "key:ns/flooder"], T0 + 400)).toBe(600);
    expect(box.refusedFor(["key:ns/flooder"], T0 + SECOND - 1)).toBe(1);
    expect(box.refusedFor(["key:ns/flooder"], T0 + SECOND)).toBe(0);
  });

  it("remember a flooder for 10 minutes after its last flood: a flood within them doubles the box, one after starts again at 1 s", () => {
    const box = new FloodPenalties();
    const id = ["key:ns/flooder"];
    box.strike(id, T0); // 1 s
    const second = T0 + 10 * MINUTE - 1;
    expect(box.strike(id, second) - second).toBe(2 * SECOND);
    // Ten minutes from the second flood (the last), not from the first.
    const third = second + 10 * MINUTE - 1;
    expect(box.strike(id, third) - third).toBe(4 * SECOND);
    const afterQuiet = third + 10 * MINUTE;
    expect(box.strike(id, afterQuiet) - afterQuiet).toBe(SECOND);
  });

  it("learn a penalty decided elsewhere (the namespace object's), never shortening a longer one they know", () => {
    const box = new FloodPenalties();
    box.learn(["key:ns/elsewhere"], T0 + 5 * SECOND, T0);
    expect(box.refusedFor(["key:ns/elsewhere"], T0)).toBe(5 * SECOND);
    box.strike(["key:ns/flooder"], T0); // 1 s here
    box.learn(["key:ns/flooder"], T0 + 300, T0);
    expect(box.refusedFor(["key:ns/flooder"], T0)).toBe(SECOND);
    box.learn(["key:ns/flooder"], T0 + 8 * SECOND, T0);
    expect(box.refusedFor(["key:ns/flooder"], T0)).toBe(8 * SECOND);
    // A flood seen here after a learnt penalty: the box counts from the learnt one's strikes, and never ends before it.
    expect(box.strike(["key:ns/elsewhere"], T0 + SECOND)).toBe(T0 + 5 * SECOND);
  });

  it("count the 10 minutes from the last flood seen, not from a penalty learnt since", () => {
    const box = new FloodPenalties();
    const id = ["key:ns/flooder"];
    box.strike(id, T0);
    box.learn(id, T0 + 9 * MINUTE + 8 * SECOND, T0 + 9 * MINUTE);
    const next = T0 + 10 * MINUTE + 8 * SECOND;
    expect(box.strike(id, next) - next).toBe(SECOND);
  });

  it("answer a refusal in whole milliseconds, at least 1, and say how long in seconds and the 60 s cap", () => {
    expect(floodRefusal(0.2, T0).retryAfterMs).toBe(1);
    const refusal = floodRefusal(1500.2, T0 + 1501);
    expect(refusal).toMatchObject({ retryAfterMs: 1501, until: T0 + 1501, code: "rate_limited", limit: "socket_flood" });
    expect(refusal.message).toMatch(/may open no new socket for 2 s \(each flood doubles it, up to 60 s\)$/);
  });

  it("remember at most 10,000 flooders: the 10,001st forgets the one whose penalty came first, not one struck again since", () => {
    const box = new FloodPenalties();
    const long = 50 * SECOND; // every box below is still running at the end
    for (let i = 0; i < 10_000; i++) box.learn([`key:ns/flooder-${i}`], T0 + long, T0);
    expect(box.refusedFor(["key:ns/flooder-0"], T0)).toBe(long);
    expect(box.refusedFor(["key:ns/flooder-1"], T0)).toBe(long);
    // flooder-0 floods again: now the most recent.
    box.strike(["key:ns/flooder-0"], T0);
    box.strike(["key:ns/flooder-10000"], T0);
    expect(box.refusedFor(["key:ns/flooder-10000"], T0)).toBe(SECOND);
    expect(box.refusedFor(["key:ns/flooder-0"], T0)).toBe(long);
    expect(box.refusedFor(["key:ns/flooder-1"], T0)).toBe(0);
    expect(box.refusedFor(["key:ns/flooder-2"], T0)).toBe(long);
    expect(box.refusedFor(["key:ns/flooder-9999"], T0)).toBe(long);
  });
});
