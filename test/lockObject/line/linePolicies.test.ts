import { Redis } from "@upstash/redis";
import { describe, expect, inject, it } from "vitest";
import { holderLinePolicy } from "../../../src/kinds/manyHolders/holderLinePolicy";
import { rwLockKeys } from "../../../src/kinds/rwlock/keys";
import type { RwGrant, RwMode } from "../../../src/kinds/rwlock/types";
import { semaphoreKeys } from "../../../src/kinds/semaphore/keys";
import type { SemaphoreGrant } from "../../../src/kinds/semaphore/types";
import { mutexLinePolicy } from "../../../src/kinds/mutex/mutexLinePolicy";
import { LineOrder } from "../../../src/lockObject/line/LineOrder";
import type { WaitOutcome } from "../../../src/lockObject/line/waitProtocol";
import { RedisStore } from "../../../src/library/RedisStore";
import { RWLOCK } from "../../../src/kinds/rwlock/types";
import { SEMAPHORE } from "../../../src/kinds/semaphore/types";
import type { LockStore } from "../../../src/store/types";
import { freshRef, requestId, tokenOf } from "../../contract/support";
import { pollUntil } from "../../support/pollUntil";

/**
 * The kinds' queue policies (what the store is asked for the line, and what
 * its answer means to the line) on a real Redis store (the gateway, the real
 * @upstash/redis client). The mutex's: only the head, a grant on arrival needs
 * no pickup, a busy answer says when to look again and who holds. The
 * many-holder kinds' (src/kinds/manyHolders/holderLinePolicy.ts): a batch from
 * the front, every reader up to the next writer, semaphore permits while they
 * fit, stopping at the first that does not; another limit refused. Run
 * through LineOrder where the choice shows as who is granted, in what order.
 */

const redis = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken"), enableTelemetry: false });
const store = new RedisStore(redis);

interface RwReq {
  mode: RwMode;
  ttlMs: number;
  watch: boolean;
}
interface SemReq {
  limit: number;
  permits: number;
  ttlMs: number;
  watch: boolean;
}

// The policies as the many-holder kinds' object part builds them (src/kinds/manyHolders/objectPart.ts).
const rwPolicy = holderLinePolicy<RwReq, RwGrant>(RWLOCK);
const semPolicy = holderLinePolicy<SemReq, SemaphoreGrant>(SEMAPHORE);

/** A wait whose outcome the test can look at without awaiting it. */
function track<G>(p: Promise<WaitOutcome<G>>) {
  const t: { outcome?: WaitOutcome<G>; done: Promise<WaitOutcome<G>> } = { done: p };
  void p.then((o) => {
    t.outcome = o;
  });
  return t;
}
const tokenGranted = <G extends { token: string }>(o: WaitOutcome<G> | undefined) => (o?.status === "granted" ? o.grant.token : undefined);
const liveStore = (): LockStore => store;

describe("mutex queue policy", () => {
  it("a fresh head on a free lock is granted without a pickup; one that waited is granted marked for pickup (the store may take it back)", async () => {
    const ref = freshRef("policy-mx");
    const [fresh, waited] = [tokenOf("fresh"), tokenOf("waited")];
    const req = { ttlMs: 4000, watch: false };
    expect(await mutexLinePolicy.admit(store, ref, [{ token: fresh, req, firstTry: true }], false)).toEqual({
      granted: [{ token: fresh, grant: expect.objectContaining({ token: fresh, ttlMs: 4000, count: 1 }), pickup: false }],
    });
    // Granted unmarked: an unclaimed withdraw takes nothing back.
    expect(await mutexLinePolicy.withdraw(store, ref, fresh, "unclaimed")).toBe(false);
    await store.mutex.release(ref, { token: fresh, requestId: requestId() });

    expect(await mutexLinePolicy.admit(store, ref, [{ token: waited, req, firstTry: false }], false)).toMatchObject({
      granted: [{ token: waited, pickup: true }],
    });
    expect(await mutexLinePolicy.withdraw(store, ref, waited, "unclaimed")).toBe(true);
    expect((await store.mutex.inspect(ref)).held).toBe(false);
  });

  it("behind a holder the head is registered: the answer says when to look again and who holds", async () => {
    const ref = freshRef("policy-mx-busy");
    const x = tokenOf("x");
    const held = await store.mutex.acquire(ref, { token: x, mode: "new", ttlMs: 5000, requestId: requestId(), watch: false, holder: "nightly" });
    if (held.status !== "granted") throw new Error(`not granted: ${JSON.stringify(held)}`);
    const head = tokenOf("head");
    const t0 = Date.now();
    const admission = await mutexLinePolicy.admit(store, ref, [{ token: head, req: { ttlMs: 4000, watch: false }, firstTry: true }], false);
    const t1 = Date.now();
    expect(admission).toEqual({ granted: [], retryInMs: expect.any(Number), current: { holder: "nightly", expiresAt: held.grant.expiresAt } });
    // What is left of the holder's lease (the store's clock and ours a few ms apart).
    expect(admission.retryInMs).toBeGreaterThanOrEqual(held.grant.expiresAt - t1 - 50);
    expect(admission.retryInMs).toBeLessThanOrEqual(held.grant.expiresAt - t0 + 50);
    // Registered: the holder's release hands the lock to it.
    const released = await store.mutex.release(ref, { token: x, requestId: requestId() });
    expect(released.status === "ok" && released.handedTo?.token).toBe(head);
  });
});

describe("many-holder queue policy", () => {
  it("each waiter of a batch is marked for pickup unless it was firstTry: the store may take back only the marked one", async () => {
    const ref = freshRef("policy-rw-marks");
    const [fresh, waited] = [tokenOf("fresh"), tokenOf("waited")];
    const req: RwReq = { mode: "read", ttlMs: 4000, watch: false };
    const admission = await rwPolicy.admit(
      store,
      ref,
      [
        { token: fresh, req, firstTry: true },
        { token: waited, req, firstTry: false },
      ],
      false,
    );
    expect(admission).toEqual({
      granted: [
        { token: fresh, grant: expect.objectContaining({ token: fresh, mode: "read" }), pickup: false },
        { token: waited, grant: expect.objectContaining({ token: waited, mode: "read" }), pickup: true },
      ],
      refused: [],
    });
    expect(await rwPolicy.withdraw(store, ref, fresh, "unclaimed")).toBe(false);
    expect(await rwPolicy.withdraw(store, ref, waited, "unclaimed")).toBe(true);
    expect(await store.rwlock.inspect(ref)).toMatchObject({ mode: "read", readers: 1 });
  });
});

describe("many-holder queue policy (through the line)", () => {
  const rwRef = () => freshRef("policy-rw");

  it("rwlock: a released writer lets every reader up to the next writer in at once; the writer next; the reader behind it after (no overtaking)", async () => {
    const ref = rwRef();
    const line = new LineOrder<RwReq, RwGrant>(rwPolicy, { store: liveStore, ref });
    const x = tokenOf("x");
    await store.rwlock.acquire(ref, { mode: "write", token: x, reenter: false, ttlMs: 5000, watch: false, requestId: requestId() });
    const modes: RwMode[] = ["read", "read", "write", "read"];
    const tokens = modes.map((m, i) => tokenOf(`${m}${i}`));
    const waits = modes.map((mode, i) => track(line.wait({ mode, ttlMs: 4000, watch: false }, 8000, undefined, { token: tokens[i] })));
    // The line's first step ran: the front is in the store's gate.
    await pollUntil(
      () => redis.exists(rwLockKeys(ref).gate),
      (n) => n === 1,
      3000,
    );
    // A release's news (the Worker tells the object: objectPart.ts kicks the line).
    const tell = async (token: string) => {
      await store.rwlock.release(ref, { token, mode: "any", requestId: requestId() });
      line.letHeadTry(true);
    };

    await tell(x);
    const [r0, r1] = await Promise.all([waits[0].done, waits[1].done]);
    expect([tokenGranted(r0), tokenGranted(r1)]).toEqual([tokens[0], tokens[1]]);
    expect(r0).toMatchObject({ status: "granted", pickup: true, grant: { mode: "read" } });
    expect(waits[2].outcome).toBeUndefined();
    expect(waits[3].outcome).toBeUndefined();
    expect(await store.rwlock.inspect(ref)).toMatchObject({ mode: "read", readers: 2, writer: false });

    await tell(tokens[0]);
    // One reader still holds: the writer waits, and so does the reader behind it.
    expect(
      await store.rwlock.acquire(ref, { mode: "read", token: tokenOf("barger"), reenter: false, ttlMs: 4000, watch: false, requestId: requestId() }),
    ).toMatchObject({
      status: "busy",
    });
    expect(waits[3].outcome).toBeUndefined();
    await tell(tokens[1]);
    expect(tokenGranted(await waits[2].done)).toBe(tokens[2]);
    expect(waits[3].outcome).toBeUndefined();
    expect(await store.rwlock.inspect(ref)).toMatchObject({ mode: "write", writer: true, readers: 0 });

    await tell(tokens[2]);
    expect(tokenGranted(await waits[3].done)).toBe(tokens[3]);
    expect(line.length).toBe(0);
  });

  it("rwlock: the first waiter on a free lock is granted on arrival with no pickup", async () => {
    const ref = rwRef();
    const line = new LineOrder<RwReq, RwGrant>(rwPolicy, { store: liveStore, ref });
    const a = tokenOf("a");
    expect(await line.wait({ mode: "write", ttlMs: 4000, watch: false }, 2000, undefined, { token: a })).toMatchObject({
      status: "granted",
      pickup: false,
      grant: { token: a, mode: "write" },
    });
  });

  it("semaphore: permits are granted in order while they fit; the first that does not stops the line, and a smaller one behind it waits", async () => {
    const ref = freshRef("policy-sem");
    const line = new LineOrder<SemReq, SemaphoreGrant>(semPolicy, { store: liveStore, ref });
    const x = tokenOf("x");
    await store.semaphore.acquire(ref, { token: x, limit: 3, permits: 2, ttlMs: 5000, watch: false });
    const [big, small] = [tokenOf("big"), tokenOf("small")];
    const bigWait = track(line.wait({ limit: 3, permits: 2, ttlMs: 4000, watch: false }, 8000, undefined, { token: big }));
    const smallWait = track(line.wait({ limit: 3, permits: 1, ttlMs: 4000, watch: false }, 8000, undefined, { token: small }));
    await pollUntil(
      () => redis.exists(semaphoreKeys(ref).gate),
      (n) => n === 1,
      3000,
    );
    // One permit is free and would fit the small one: it is not granted past the big one.
    expect(smallWait.outcome).toBeUndefined();
    expect(await store.semaphore.inspect(ref)).toMatchObject({ used: 2, holders: 1 });

    await store.semaphore.release(ref, { token: x, requestId: requestId() });
    line.letHeadTry(true);
    const [b, s] = await Promise.all([bigWait.done, smallWait.done]);
    expect(b).toMatchObject({ status: "granted", pickup: true, grant: { token: big, permits: 2 } });
    expect(s).toMatchObject({ status: "granted", pickup: true, grant: { token: small, permits: 1 } });
    expect(await store.semaphore.inspect(ref)).toMatchObject({ used: 3, holders: 2 });
  });

  it("semaphore: a waiter asking another limit than the holders' is refused (limit_mismatch), the next one is still served", async () => {
    const ref = freshRef("policy-sem-limit");
    const line = new LineOrder<SemReq, SemaphoreGrant>(semPolicy, { store: liveStore, ref });
    await store.semaphore.acquire(ref, { token: tokenOf("x"), limit: 3, permits: 1, ttlMs: 5000, watch: false });
    const other = track(line.wait({ limit: 5, permits: 1, ttlMs: 4000, watch: false }, 3000, undefined, { token: tokenOf("other") }));
    const fits = track(line.wait({ limit: 3, permits: 1, ttlMs: 4000, watch: false }, 3000, undefined, { token: tokenOf("fits") }));
    expect(await other.done).toMatchObject({ status: "refused", code: "limit_mismatch" });
    expect(await fits.done).toMatchObject({ status: "granted" });
  });

  it("a release's news with nobody in line drops a gate a lost line left behind (the idle step), so try-locks are served again", async () => {
    const ref = freshRef("policy-idle");
    // A line that had more waiters behind its front and was then lost (its object restarted): the gate stays.
    await store.semaphore.admit(ref, [{ token: tokenOf("gone"), limit: 3, permits: 1, ttlMs: 4000, watch: false, markPickup: false }], true);
    const tryLock = () => store.semaphore.acquire(ref, { token: tokenOf("try"), limit: 3, permits: 1, ttlMs: 4000, watch: false });
    expect(await tryLock()).toMatchObject({ status: "busy", queued: true });
    const line = new LineOrder<SemReq, SemaphoreGrant>(semPolicy, { store: liveStore, ref });
    line.letHeadTry(true);
    await pollUntil(
      () => redis.exists(semaphoreKeys(ref).gate),
      (n) => n === 0,
      3000,
    );
    expect((await tryLock()).status).toBe("granted");
  });
});
