import { Redis } from "@upstash/redis";
import { describe, expect, inject, it } from "vitest";
import { StoreUnavailableError } from "../../../src/errors";
import { PICKUP_MS } from "../../../src/limits";
import { LineOrder } from "../../../src/lockObject/line/LineOrder";
import type { WaitOutcome } from "../../../src/lockObject/line/waitProtocol";
import { mutexKeys } from "../../../src/kinds/mutex/keys";
import { type MutexWaitRequest, mutexLinePolicy } from "../../../src/kinds/mutex/mutexLinePolicy";
import type { MutexGrant } from "../../../src/kinds/mutex/types";
import { RedisStore } from "../../../src/library/RedisStore";
import type { LockStore } from "../../../src/store/types";
import { freshRef, requestId, tokenOf } from "../../contract/support";
import { pollUntil } from "../../support/pollUntil";

/**
 * The lock object's line (LineOrder) on its own, with the mutex's policy
 * and a real Redis store (the gateway, the real @upstash/redis client): no
 * lock object, no HTTP. The test plays the object's part where the line
 * needs one (a release's news: handedOver or kick; a delivered answer:
 * pickedUp), as src/kinds/mutex/objectPart.ts does. Checks arrival order,
 * deadlines, a client that goes away, pickups and take-backs, store faults
 * and a bug in a store step.
 */

const redis = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken"), enableTelemetry: false });
const live = new RedisStore(redis);
/** A real client to a port nobody listens on: every store call fails as an outage does (StoreUnavailableError). */
const down = new RedisStore(new Redis({ url: "http://127.0.0.1:9", token: "none", retry: false, enableTelemetry: false }));

const req = (ttlMs = 4000): MutexWaitRequest => ({ ttlMs, watch: false });

function lineFor(ref = freshRef("line"), store: () => LockStore = () => live) {
  const line = new LineOrder<MutexWaitRequest, MutexGrant>(mutexLinePolicy, { store, ref });
  /** A holder's release, and the news the lock object hears of it (objectPart.ts: handedOver, or a kick for the head). */
  async function release(token: string) {
    const r = await live.mutex.release(ref, { token, requestId: requestId() });
    if (r.status === "ok" && r.handedTo) line.handedOver(r.handedTo.token, r.handedTo);
    else if (line.length) line.letHeadTry();
    return r;
  }
  async function holdWith(token: string, ttlMs = 5000, holder?: string) {
    const r = await live.mutex.acquire(ref, { token, mode: "new", ttlMs, requestId: requestId(), watch: false, holder });
    if (r.status !== "granted") throw new Error(`the holder was not granted: ${JSON.stringify(r)}`);
    return r.grant;
  }
  /** Waits until the line's head is registered in the store behind the holder (its first store step is done). */
  const untilRegistered = (token: string) =>
    pollUntil(
      () => redis.hget<string>(mutexKeys.lock(ref), "nt"),
      (t) => t === token,
      3000,
    );
  return { ref, line, release, holdWith, untilRegistered };
}

/** A wait whose outcome the test can look at without awaiting it. */
function track(p: Promise<WaitOutcome<MutexGrant>>) {
  const t: { outcome?: WaitOutcome<MutexGrant>; done: Promise<WaitOutcome<MutexGrant>> } = { done: p };
  void p.then((o) => {
    t.outcome = o;
  });
  return t;
}

const grantedTo = (o: WaitOutcome<MutexGrant> | undefined) => (o?.status === "granted" ? o.grant.token : undefined);

/**
 * x holds; a waits first (its lease `aTtlMs`), b behind it (for `bWaitMs`); once a is registered in
 * the store, x releases: the store hands the lock to a, a grant from the line (to be picked up).
 */
async function handedToTheHead({ aTtlMs = 4000, bWaitMs = 8000 } = {}) {
  const { ref, line, release, holdWith, untilRegistered } = lineFor();
  const x = tokenOf("x");
  await holdWith(x);
  const [a, b] = [tokenOf("a"), tokenOf("b")];
  const first = track(line.wait(req(aTtlMs), 8000, undefined, { token: a }));
  const second = track(line.wait(req(), bWaitMs, undefined, { token: b }));
  await untilRegistered(a);
  await release(x);
  return { ref, line, a, b, first, second };
}

describe("LineOrder (mutex policy, Redis store)", () => {
  it("a waiter that finds the lock free and the line empty is granted at once, with no pickup to wait for", async () => {
    const { ref, line } = lineFor();
    const a = tokenOf("a");
    const outcome = await line.wait(req(), 2000, undefined, { token: a });
    expect(outcome).toMatchObject({ status: "granted", grant: { token: a, count: 1 }, pickup: false });
    expect(await live.mutex.inspect(ref)).toMatchObject({ held: true });
    expect(line.length).toBe(0);
  });

  it("waiters are served in arrival order, each release handing the lock to the next, fences rising", async () => {
    const { line, release, holdWith, untilRegistered } = lineFor();
    const x = tokenOf("x");
    await holdWith(x);
    const tokens = [tokenOf("a"), tokenOf("b"), tokenOf("c")];
    const waits = tokens.map((token) => track(line.wait(req(), 8000, undefined, { token })));
    expect(line.length).toBe(3);
    await untilRegistered(tokens[0]);

    let holder = x;
    const fences: number[] = [];
    for (const [i, token] of tokens.entries()) {
      await release(holder);
      const outcome = await waits[i].done;
      expect(outcome).toMatchObject({ status: "granted", grant: { token }, pickup: true });
      // Nobody behind it was granted ahead of it.
      for (const later of waits.slice(i + 1)) expect(later.outcome).toBeUndefined();
      line.pickedUp(token);
      fences.push(outcome.status === "granted" ? outcome.grant.fence : 0);
      holder = token;
    }
    expect(fences[1]).toBeGreaterThan(fences[0]);
    expect(fences[2]).toBeGreaterThan(fences[1]);
    await release(holder);
  });

  it("a wait that runs out answers locked with the holder's remaining time and label, and leaves the store's line", async () => {
    const { ref, line, release, holdWith } = lineFor();
    const x = tokenOf("x");
    const held = await holdWith(x, 5000, "batch-job");
    const a = tokenOf("a");
    const t0 = Date.now();
    const outcome = await line.wait(req(), 200, undefined, { token: a });
    const t1 = Date.now();
    expect(outcome).toEqual({ status: "locked", retryAfterMs: expect.any(Number), current: { holder: "batch-job", expiresAt: held.expiresAt } });
    if (outcome.status !== "locked") return;
    // What is left of the holder's lease when the wait ran out (the store's clock and ours a few ms apart).
    expect(outcome.retryAfterMs).toBeGreaterThanOrEqual(held.expiresAt - t1 - 50);
    expect(outcome.retryAfterMs).toBeLessThanOrEqual(held.expiresAt - t0 + 50);
    // The head it was is withdrawn from the store: the holder's release hands the lock to nobody.
    await pollUntil(
      () => redis.hexists(mutexKeys.lock(ref), "nt"),
      (n) => n === 0,
      3000,
    );
    const r = await release(x);
    expect(r).toMatchObject({ status: "ok", released: true });
    expect(r.status === "ok" && r.handedTo).toBeFalsy();
    expect(line.length).toBe(0);
  });

  it("a waiter whose client goes away leaves at once; the one behind it is served next, and the departed never holds", async () => {
    const { ref, line, release, holdWith, untilRegistered } = lineFor();
    const x = tokenOf("x");
    await holdWith(x);
    const [a, b] = [tokenOf("a"), tokenOf("b")];
    const gone = new AbortController();
    const first = track(line.wait(req(), 8000, gone.signal, { token: a }));
    const second = track(line.wait(req(), 8000, undefined, { token: b }));
    await untilRegistered(a);
    gone.abort();
    expect(await first.done).toEqual({ status: "locked", retryAfterMs: 1 });
    expect(line.length).toBe(1);

    await release(x);
    expect(grantedTo(await second.done)).toBe(b);
    expect(await live.mutex.inspect(ref)).toMatchObject({ held: true });
    expect(await live.mutex.heartbeat(ref, { token: a })).toEqual({ status: "lost" });
    expect((await live.mutex.heartbeat(ref, { token: b })).status).toBe("ok");
  });

  it("a grant from the line that nobody picks up is taken back after the pickup time, and the next waiter gets the lock", async () => {
    const { ref, line, a, b, first, second } = await handedToTheHead();
    expect(await first.done).toMatchObject({ status: "granted", pickup: true });
    const grantedAt = Date.now();
    expect(grantedTo(await second.done)).toBe(b);
    // Taken back by the pickup timer (not at once, as takeBack would): the margin is for a slow machine.
    expect(Date.now() - grantedAt).toBeGreaterThanOrEqual(PICKUP_MS - 500);
    expect(line.wasTakenBack(a)).toBe(true);
    expect(await live.mutex.heartbeat(ref, { token: a })).toEqual({ status: "lost" });
  });

  it("takeBack (the client closed before acknowledging) gives the grant back at once, before the pickup time", async () => {
    const { line, a, b, first, second } = await handedToTheHead();
    await first.done;
    const t0 = Date.now();
    line.takeBack(a);
    expect(grantedTo(await second.done)).toBe(b);
    expect(Date.now() - t0).toBeLessThan(PICKUP_MS);
  });

  it("a grant picked up is kept: the waiter behind it waits out its own deadline past the pickup time", async () => {
    const { ref, line, a, first, second } = await handedToTheHead({ aTtlMs: 8000, bWaitMs: PICKUP_MS + 700 });
    await first.done;
    line.pickedUp(a);
    expect(await second.done).toMatchObject({ status: "locked" });
    expect(line.wasTakenBack(a)).toBe(false);
    expect((await live.mutex.heartbeat(ref, { token: a })).status).toBe("ok");
  });

  it("a take-back that comes after the grant was picked up takes nothing back: its holder keeps the lease (a socket's close racing its ack)", async () => {
    const { ref, line, a, first, second } = await handedToTheHead({ aTtlMs: 8000, bWaitMs: 1500 });
    await first.done;
    line.pickedUp(a);
    line.takeBack(a);
    expect(await second.done).toMatchObject({ status: "locked" });
    expect(line.wasTakenBack(a)).toBe(false);
    expect((await live.mutex.heartbeat(ref, { token: a })).status).toBe("ok");
  });

  it("a pickup that comes while an earlier take-back is on its way to the store calls its own take-back off: nobody else is granted", async () => {
    // The store's steps are the real store's, seen on their way by a wrapper: it holds one step until told (so two
    // take-backs are owed at once, as when the line is busy in a slow store step) and says when another starts. The
    // order is the one a busy line meets for real; the wrapper only fixes it, so the case is not left to chance.
    let admitAllowed!: () => void;
    const admitMayGo = new Promise<void>((resolve) => (admitAllowed = resolve));
    let admitHeld!: () => void;
    const admitWaits = new Promise<void>((resolve) => (admitHeld = resolve));
    let cAdmitted!: () => void;
    const cAdmitStarted = new Promise<void>((resolve) => (cAdmitted = resolve));
    const [h, a, x, c] = [tokenOf("h"), tokenOf("a"), tokenOf("x"), tokenOf("c")];
    const withdrawn: string[] = [];
    let line!: LineOrder<MutexWaitRequest, MutexGrant>;
    const mutex = live.mutex;
    const seen: LockStore = Object.create(live, {
      mutex: {
        value: {
          ...mutex,
          acquire: async (...args: Parameters<typeof mutex.acquire>) => {
            const [, input] = args;
            if (input.token === x && input.mode === "queue") {
              admitHeld();
              await admitMayGo;
            }
            if (input.token === c) cAdmitted();
            return mutex.acquire(...args);
          },
          withdraw: async (...args: Parameters<typeof mutex.withdraw>) => {
            const [, input] = args;
            withdrawn.push(input.token);
            // The Worker's confirmation of a's delivery arrives while x's take-back is on its way.
            if (input.token === x) line.pickedUp(a);
            return mutex.withdraw(...args);
          },
        },
      },
    });
    const made = lineFor(freshRef("line-pickup-race"), () => seen);
    line = made.line;
    const { ref, release, holdWith, untilRegistered } = made;
    await holdWith(h);
    const first = track(line.wait(req(8000), 8000, undefined, { token: a }));
    await untilRegistered(a);
    await release(h);
    expect(await first.done).toMatchObject({ status: "granted", pickup: true });
    // x waits behind a; its store step is held while x leaves and a's grant is due back (its pickup time ran out).
    const gone = new AbortController();
    const second = track(line.wait(req(), 8000, gone.signal, { token: x }));
    await admitWaits;
    gone.abort();
    line.takeBack(a);
    const third = track(line.wait(req(), 8000, undefined, { token: c }));
    admitAllowed();
    await second.done;
    // c's store step comes after the take-backs the line owed: by then a's was called off.
    await cAdmitStarted;
    expect((await live.mutex.heartbeat(ref, { token: a })).status).toBe("ok");
    expect(third.outcome).toBeUndefined();
    expect(withdrawn).toEqual([x]);
    expect(line.wasTakenBack(a)).toBe(false);
    await release(a);
    expect(grantedTo(await third.done)).toBe(c);
    await live.mutex.release(ref, { token: c, requestId: requestId() });
  });

  it("while the store is down the line backs off (no spinning), a wait that ends meanwhile answers unavailable", async () => {
    let calls = 0;
    const { line } = lineFor(freshRef("line-down"), () => {
      calls += 1;
      return down;
    });
    const started = Date.now();
    const outcome = await line.wait(req(), 700, undefined, { token: tokenOf("a") });
    expect(outcome).toMatchObject({ status: "unavailable", outcome: "unknown" });
    // Backing off 100, 200, 400 ms ...: a handful of store steps in 700 ms, not one per event-loop turn.
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(calls).toBeLessThanOrEqual(5);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("when the store answers again the line carries on: the waiter that waited through the fault is granted", async () => {
    let store: LockStore = down;
    let failed = 0;
    const { ref, line } = lineFor(freshRef("line-back"), () => {
      if (store === down) failed += 1;
      return store;
    });
    const a = tokenOf("a");
    const wait = track(line.wait(req(), 5000, undefined, { token: a }));
    await pollUntil(
      () => failed,
      (n) => n >= 2,
      3000,
    );
    store = live;
    expect(await wait.done).toMatchObject({ status: "granted", grant: { token: a } });
    expect(await live.mutex.inspect(ref)).toMatchObject({ held: true });
  });

  it("a store step that fails as a bug (not an outage) fails that waiter with internal at once; nothing loops on it", async () => {
    const ref = freshRef("line-bug");
    // A key of the wrong type where the mutex's hash should be: the script's error is Redis's WRONGTYPE, a bug, not an outage.
    await redis.set(mutexKeys.lock(ref), "not a hash");
    let calls = 0;
    const { line } = lineFor(ref, () => {
      calls += 1;
      return live;
    });
    const started = Date.now();
    const outcome = await line.wait(req(), 5000, undefined, { token: tokenOf("a") });
    expect(outcome).toMatchObject({ status: "internal" });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(calls).toBe(1);
    expect(line.length).toBe(0);
    await redis.del(mutexKeys.lock(ref));
  });

  it("StoreUnavailableError is what the down store throws (the fault the two cases above rely on)", async () => {
    await expect(down.mutex.inspect(freshRef("probe"))).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
