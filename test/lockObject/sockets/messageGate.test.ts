// One wait socket's MessageGate on its own (src/lockObject/sockets/messageGate.ts): no socket, no lock
// object. Its messages are handled one after another, a third while two are in the gate is
// refused, and the rate bucket refuses past SOCKET_MESSAGES_PER_SECOND and refills with time.
// Time is the gate's `now` argument, so nothing here sleeps.
import { describe, expect, it } from "vitest";
import { RateLimitedError } from "../../../src/errors";
import { SOCKET_MESSAGES_PER_SECOND } from "../../../src/limits";
import { MessageGate } from "../../../src/lockObject/sockets/messageGate";

/** A handler the test finishes when it says, recording when it started and ended. */
function handler(name: string, log: string[]) {
  let finish!: () => void;
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  return {
    handle: async () => {
      log.push(`${name} started`);
      await finished;
      log.push(`${name} ended`);
    },
    finish: () => finish(),
  };
}

/**
 * Lets every pending step run: the gate starts a message's handler a turn of the event loop after it
 * may (a setTimeout of 0, so a flood's frames are counted before any is handled), so this waits past
 * any such timer set before it fires (Node runs timers in order of their due time), then one turn more.
 */
const settle = () => new Promise<void>((r) => setTimeout(r, 10)).then(() => new Promise<void>((r) => setImmediate(r)));

/** What `run` threw, or undefined when it let the message in. */
function refusal(run: () => unknown): unknown {
  try {
    const p = run();
    if (p instanceof Promise) p.catch(() => {});
    return undefined;
  } catch (err) {
    return err;
  }
}

const inGateReason = /two of its messages were still being handled/;
const rateReason = new RegExp(`at most ${SOCKET_MESSAGES_PER_SECOND} messages a second`);

describe("MessageGate", () => {
  it("handles a second message only once the first is done, and a failed one does not hold up the next", async () => {
    const gate = new MessageGate();
    const log: string[] = [];
    const first = handler("first", log);
    const second = handler("second", log);
    const firstDone = gate.run(first.handle);
    const secondDone = gate.run(second.handle);
    await settle();
    // The second waits behind the first, however long the first takes.
    expect(log).toEqual(["first started"]);
    first.finish();
    await firstDone;
    await settle();
    expect(log).toEqual(["first started", "first ended", "second started"]);
    second.finish();
    await secondDone;
    // A handler's failure is its own message's answer; the message after it still runs.
    const failing = gate.run(() => Promise.reject(new Error("bad message")));
    const after = gate.run(() => {
      log.push("after a failure");
    });
    await expect(failing).rejects.toThrow("bad message");
    await after;
    expect(log.at(-1)).toBe("after a failure");
  });

  it("refuses a third message while two are in the gate (one handled, one waiting), and lets one in again once the first is done", async () => {
    const gate = new MessageGate();
    const log: string[] = [];
    const first = handler("first", log);
    const second = handler("second", log);
    const firstDone = gate.run(first.handle);
    const secondDone = gate.run(second.handle);
    const third = handler("third", log);
    const refused = refusal(() => gate.run(third.handle));
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({ code: "rate_limited", limit: "socket_messages", message: expect.stringMatching(inGateReason) });
    expect((refused as RateLimitedError).retryAfterMs).toBeGreaterThan(0);
    first.finish();
    second.finish();
    await Promise.all([firstDone, secondDone]);
    await settle();
    // The refused message was never handled; the gate is open again for the next.
    expect(log).not.toContain("third started");
    const fourth = handler("fourth", log);
    const fourthDone = gate.run(fourth.handle);
    fourth.finish();
    await fourthDone;
    expect(log.at(-1)).toBe("fourth ended");
  });

  it(`lets in ${SOCKET_MESSAGES_PER_SECOND} messages at once, refuses the next with the rate reason, and refills at that rate up to the same bucket`, async () => {
    const gate = new MessageGate();
    // Taken after the gate was made: the gate's own clock starts at or before it (never a negative refill).
    const t0 = Date.now();
    let handled = 0;
    const one = (now: number) => gate.run(() => void handled++, now);
    // Each is done before the next, so only the rate can refuse.
    for (let i = 0; i < SOCKET_MESSAGES_PER_SECOND; i++) await one(t0);
    expect(handled).toBe(SOCKET_MESSAGES_PER_SECOND);

    const dry = refusal(() => one(t0));
    expect(dry).toBeInstanceOf(RateLimitedError);
    expect(dry).toMatchObject({ code: "rate_limited", limit: "socket_messages", message: expect.stringMatching(rateReason) });
    // A whole token is missing: it comes back in 1000 / rate ms.
    expect((dry as RateLimitedError).retryAfterMs).toBe(Math.ceil(1000 / SOCKET_MESSAGES_PER_SECOND));

    // Half a token's time afterAnswer: still refused, and told to come back in the other half.
    const halfToken = 500 / SOCKET_MESSAGES_PER_SECOND;
    const half = refusal(() => one(t0 + halfToken));
    expect(half).toMatchObject({ limit: "socket_messages", message: expect.stringMatching(rateReason) });
    expect((half as RateLimitedError).retryAfterMs).toBe(Math.ceil(halfToken));

    // Two tokens' time after the bucket ran dry: two more are let in, the third is refused.
    const twoTokens = t0 + 2000 / SOCKET_MESSAGES_PER_SECOND;
    await one(twoTokens);
    await one(twoTokens);
    expect(refusal(() => one(twoTokens))).toMatchObject({ limit: "socket_messages", message: expect.stringMatching(rateReason) });
    expect(handled).toBe(SOCKET_MESSAGES_PER_SECOND + 2);

    // A long quiet spell fills the bucket again, and no more than full.
    const later = t0 + 60_000;
    for (let i = 0; i < SOCKET_MESSAGES_PER_SECOND; i++) await one(later);
    expect(refusal(() => one(later))).toMatchObject({ limit: "socket_messages", message: expect.stringMatching(rateReason) });
    expect(handled).toBe(2 * SOCKET_MESSAGES_PER_SECOND + 2);
  });
});
