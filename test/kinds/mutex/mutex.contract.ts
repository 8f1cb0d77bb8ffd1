import { expect, it } from "vitest";
import type { MutexAcquireInput } from "../../../src/kinds/mutex/types";
import {
  fenceIssuedBetween,
  freshRef,
  type NewStore,
  remainingUntil,
  requestId,
  SHORT_TTL_MS,
  timeBetween,
  timed,
  tokenOf,
  untilStore,
} from "../../contract/support";

/**
 * The mutex at the store boundary (MutexOps: lua/mutex/*.lua against
 * durableMutex.ts): a try-lock, re-entry, heartbeat, release, the lock
 * object's queue mode and withdraw, fences, inspect and watch.
 */
export function mutexContract(newStore: NewStore): void {
  const tryLock = (token: string, ttlMs = 5000, extra: Partial<MutexAcquireInput> = {}): MutexAcquireInput => ({
    token,
    mode: "new",
    ttlMs,
    requestId: requestId(),
    watch: false,
    ...extra,
  });

  it("a free mutex is granted with a fresh fence; a second try is busy and names the holder; inspect shows the lease", async () => {
    const store = newStore();
    const ref = freshRef("mx-free");
    const a = tokenOf("a");
    const { value: granted, t0, t1 } = await timed(() => store.mutex.acquire(ref, tryLock(a, 5000, { holder: "job-1" })));
    expect(granted).toEqual({
      status: "granted",
      grant: { name: ref.name, token: a, fence: fenceIssuedBetween(t0, t1), ttlMs: 5000, expiresAt: timeBetween(t0, t1, 5000), count: 1 },
    });
    if (granted.status !== "granted") return;
    const { expiresAt, fence } = granted.grant;

    const busy = await timed(() => store.mutex.acquire(ref, tryLock(tokenOf("b"))));
    expect(busy.value).toEqual({
      status: "busy",
      retryAfterMs: remainingUntil(expiresAt, busy.t0, busy.t1),
      queued: false,
      current: { holder: "job-1", expiresAt },
    });

    const seen = await timed(() => store.mutex.inspect(ref));
    expect(seen.value).toEqual({
      held: true,
      fence,
      count: 1,
      ttlMs: remainingUntil(expiresAt, seen.t0, seen.t1),
      expiresAt,
      holder: "job-1",
      delayedUntil: null,
    });
  });

  it("a try-lock retried with the holder's own token is its own grant again, not a second hold", async () => {
    const store = newStore();
    const ref = freshRef("mx-retry");
    const a = tokenOf("a");
    const first = await store.mutex.acquire(ref, tryLock(a));
    expect(await store.mutex.acquire(ref, tryLock(a))).toEqual(first);
    expect((await store.mutex.inspect(ref)).count).toBe(1);
  });

  it("re-entry counts, a retried re-entry (same request id) gets the first answer, and releases count down", async () => {
    const store = newStore();
    const ref = freshRef("mx-reenter");
    const a = tokenOf("a");
    const first = await store.mutex.acquire(ref, tryLock(a));
    if (first.status !== "granted") throw new Error(`not granted: ${JSON.stringify(first)}`);
    const reenter = tryLock(a, 7000, { mode: "reenter" });
    const { value: again, t0, t1 } = await timed(() => store.mutex.acquire(ref, reenter));
    expect(again).toEqual({
      status: "granted",
      grant: { name: ref.name, token: a, fence: first.grant.fence, ttlMs: 7000, expiresAt: timeBetween(t0, t1, 7000), count: 2 },
    });
    expect(await store.mutex.acquire(ref, reenter)).toEqual(again);
    expect(await store.mutex.acquire(ref, tryLock(tokenOf("b"), 5000, { mode: "reenter" }))).toEqual({ status: "lost" });

    const fence = first.grant.fence;
    expect(await store.mutex.release(ref, { token: a, requestId: requestId() })).toEqual({
      status: "ok",
      released: false,
      count: 1,
      fence,
      watched: false,
    });
    expect(await store.mutex.release(ref, { token: a, requestId: requestId() })).toEqual({
      status: "ok",
      released: true,
      count: 0,
      fence,
      watched: false,
    });
    // Free, and the last fence issued is still shown (it is kept past the lease).
    expect(await store.mutex.inspect(ref)).toEqual({ held: false, fence, count: 0, ttlMs: 0, expiresAt: null, holder: null, delayedUntil: null });
  });

  it("a retried release (same request id) gets its first answer: an inner one takes no second level, a final one is not lost", async () => {
    const store = newStore();
    const ref = freshRef("mx-release-retry");
    const a = tokenOf("a");
    const first = await store.mutex.acquire(ref, tryLock(a));
    if (first.status !== "granted") throw new Error(`not granted: ${JSON.stringify(first)}`);
    await store.mutex.acquire(ref, tryLock(a, 5000, { mode: "reenter" }));
    const fence = first.grant.fence;
    const inner = { token: a, requestId: requestId() };
    const innerAnswer = { status: "ok", released: false, count: 1, fence, watched: false };
    expect(await store.mutex.release(ref, inner)).toEqual(innerAnswer);
    expect(await store.mutex.release(ref, inner)).toEqual(innerAnswer);
    expect((await store.mutex.inspect(ref)).count).toBe(1);
    const last = { token: a, requestId: requestId() };
    const lastAnswer = { status: "ok", released: true, count: 0, fence, watched: false };
    expect(await store.mutex.release(ref, last)).toEqual(lastAnswer);
    expect(await store.mutex.release(ref, last)).toEqual(lastAnswer);
    // A new release of the freed lock is no retry: lost.
    expect(await store.mutex.release(ref, { token: a, requestId: requestId() })).toEqual({ status: "lost" });
  });

  it("a heartbeat renews by its ttl, or by the last acquire's without one; a wrong token is lost", async () => {
    const store = newStore();
    const ref = freshRef("mx-heartbeat");
    const a = tokenOf("a");
    const first = await store.mutex.acquire(ref, tryLock(a, 3000));
    if (first.status !== "granted") throw new Error(`not granted: ${JSON.stringify(first)}`);
    const { fence } = first.grant;

    const longer = await timed(() => store.mutex.heartbeat(ref, { token: a, ttlMs: 9000 }));
    expect(longer.value).toEqual({ status: "ok", expiresAt: timeBetween(longer.t0, longer.t1, 9000), ttlMs: 9000, fence });
    const seen = await store.mutex.inspect(ref);
    expect(seen.expiresAt).toBe(longer.value.status === "ok" ? longer.value.expiresAt : -1);

    const plain = await timed(() => store.mutex.heartbeat(ref, { token: a }));
    expect(plain.value).toEqual({ status: "ok", expiresAt: timeBetween(plain.t0, plain.t1, 3000), ttlMs: 3000, fence });

    expect(await store.mutex.heartbeat(ref, { token: tokenOf("b"), ttlMs: 9000 })).toEqual({ status: "lost" });
  });

  it("a release with a token that does not hold it is lost and changes nothing", async () => {
    const store = newStore();
    const ref = freshRef("mx-wrong");
    const a = tokenOf("a");
    await store.mutex.acquire(ref, tryLock(a));
    const before = await store.mutex.inspect(ref);
    expect(await store.mutex.release(ref, { token: tokenOf("b"), requestId: requestId() })).toEqual({ status: "lost" });
    expect(await store.mutex.inspect(ref)).toMatchObject({ held: true, fence: before.fence, count: 1, expiresAt: before.expiresAt });
  });

  it("every new holder gets a larger fence than the last", async () => {
    const store = newStore();
    const ref = freshRef("mx-fence");
    const fences: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = tokenOf(`h${i}`);
      const r = await store.mutex.acquire(ref, tryLock(t));
      if (r.status !== "granted") throw new Error(`not granted: ${JSON.stringify(r)}`);
      fences.push(r.grant.fence);
      await store.mutex.release(ref, { token: t, requestId: requestId() });
    }
    expect(fences[1]).toBeGreaterThan(fences[0]);
    expect(fences[2]).toBeGreaterThan(fences[1]);
  });

  it("a lapsed lease is free: its token is lost for heartbeat and release, its watch says lapsed, the next holder's fence is larger", async () => {
    const store = newStore();
    const ref = freshRef("mx-lapse");
    const a = tokenOf("a");
    const first = await store.mutex.acquire(ref, tryLock(a, SHORT_TTL_MS));
    if (first.status !== "granted") throw new Error(`not granted: ${JSON.stringify(first)}`);
    const { fence } = first.grant;
    expect(await store.mutex.watch(ref, { fence })).toMatchObject({ state: "held" });

    await untilStore(
      () => store.mutex.inspect(ref),
      (s) => !s.held,
    );
    expect(await store.mutex.heartbeat(ref, { token: a })).toEqual({ status: "lost" });
    expect(await store.mutex.release(ref, { token: a, requestId: requestId() })).toEqual({ status: "lost" });
    expect(await store.mutex.watch(ref, { fence })).toEqual({ state: "lapsed" });
    const next = await store.mutex.acquire(ref, tryLock(tokenOf("b")));
    expect(next.status === "granted" && next.grant.fence).toBeGreaterThan(fence);
  });

  it("watch: a held lease's remaining time; an unwatched lease released on purpose reads lapsed", async () => {
    const store = newStore();
    const ref = freshRef("mx-watch");
    const a = tokenOf("a");
    const first = await store.mutex.acquire(ref, tryLock(a, 4000));
    if (first.status !== "granted") throw new Error(`not granted: ${JSON.stringify(first)}`);
    const w = await timed(() => store.mutex.watch(ref, { fence: first.grant.fence }));
    expect(w.value).toEqual({ state: "held", remainingMs: remainingUntil(first.grant.expiresAt, w.t0, w.t1), expiresAt: first.grant.expiresAt });
    await store.mutex.release(ref, { token: a, requestId: requestId() });
    expect(await store.mutex.watch(ref, { fence: first.grant.fence })).toEqual({ state: "lapsed" });
  });

  it("queue mode registers the object's head behind the holder; the release hands the lock straight to it, marked for pickup", async () => {
    const store = newStore();
    const ref = freshRef("mx-queue");
    const a = tokenOf("a");
    const w = tokenOf("w");
    const first = await store.mutex.acquire(ref, tryLock(a, 5000, { holder: "first" }));
    if (first.status !== "granted") throw new Error(`not granted: ${JSON.stringify(first)}`);
    const queued = await timed(() => store.mutex.acquire(ref, tryLock(w, 4000, { mode: "queue", markPickup: true, holder: "second" })));
    expect(queued.value).toEqual({
      status: "busy",
      retryAfterMs: remainingUntil(first.grant.expiresAt, queued.t0, queued.t1),
      queued: false,
      current: { holder: "first", expiresAt: first.grant.expiresAt },
    });

    // The registration makes the lease watched: its release must be heard by the object.
    const { value: released, t0, t1 } = await timed(() => store.mutex.release(ref, { token: a, requestId: requestId() }));
    expect(released).toEqual({
      status: "ok",
      released: true,
      count: 0,
      fence: first.grant.fence,
      watched: true,
      handedTo: { name: ref.name, token: w, fence: expect.any(Number), ttlMs: 4000, expiresAt: timeBetween(t0, t1, 4000), count: 1 },
    });
    if (released.status !== "ok" || !released.handedTo) return;
    expect(released.handedTo.fence).toBeGreaterThan(first.grant.fence);
    expect(await store.mutex.inspect(ref)).toMatchObject({ held: true, fence: released.handedTo.fence, holder: "second" });

    // Not picked up: the object may take it back (unclaimed), and the lock is free again.
    expect(await store.mutex.withdraw(ref, { token: w, reason: "unclaimed" })).toEqual({ status: "revoked", fence: released.handedTo.fence });
    expect(await store.mutex.inspect(ref)).toMatchObject({ held: false, fence: released.handedTo.fence });
  });

  it("a heartbeat picks a handed-over grant up: unclaimed takes nothing back, left takes it back anyway", async () => {
    const store = newStore();
    const ref = freshRef("mx-pickup");
    const a = tokenOf("a");
    const w = tokenOf("w");
    await store.mutex.acquire(ref, tryLock(a));
    await store.mutex.acquire(ref, tryLock(w, 4000, { mode: "queue", markPickup: true }));
    const released = await store.mutex.release(ref, { token: a, requestId: requestId() });
    expect(released.status === "ok" && released.handedTo?.token).toBe(w);
    expect((await store.mutex.heartbeat(ref, { token: w })).status).toBe("ok");
    expect(await store.mutex.withdraw(ref, { token: w, reason: "unclaimed" })).toEqual({ status: "none" });
    expect(await store.mutex.withdraw(ref, { token: w, reason: "left" })).toMatchObject({ status: "revoked" });
    expect((await store.mutex.inspect(ref)).held).toBe(false);
  });

  it("no barging: while a registered waiter exists a free lock is busy (queued) to a try-lock, but granted to the object's head", async () => {
    const store = newStore();
    const ref = freshRef("mx-barge");
    const a = tokenOf("a");
    const w = tokenOf("w");
    await store.mutex.acquire(ref, tryLock(a, SHORT_TTL_MS));
    await store.mutex.acquire(ref, tryLock(w, 4000, { mode: "queue", markPickup: true }));
    // The holder lapses (no release, so no handover): the registration stays.
    await untilStore(
      () => store.mutex.inspect(ref),
      (s) => !s.held,
    );
    expect(await store.mutex.acquire(ref, tryLock(tokenOf("c")))).toEqual({ status: "busy", retryAfterMs: 100, queued: true });
    const head = await store.mutex.acquire(ref, tryLock(w, 4000, { mode: "queue", markPickup: true }));
    expect(head).toMatchObject({ status: "granted", grant: { token: w, ttlMs: 4000, count: 1 } });
  });

  it("withdraw: a registered head is unregistered (try-locks may take the lock again); an unknown token finds nothing", async () => {
    const store = newStore();
    const ref = freshRef("mx-withdraw");
    const a = tokenOf("a");
    const w = tokenOf("w");
    await store.mutex.acquire(ref, tryLock(a));
    await store.mutex.acquire(ref, tryLock(w, 4000, { mode: "queue" }));
    expect(await store.mutex.withdraw(ref, { token: w, reason: "left" })).toEqual({ status: "unregistered" });
    expect(await store.mutex.withdraw(ref, { token: tokenOf("x"), reason: "left" })).toEqual({ status: "none" });
    // Nobody registered: the release hands nothing over.
    const released = await store.mutex.release(ref, { token: a, requestId: requestId() });
    expect(released).toMatchObject({ status: "ok", released: true });
    expect(released.status === "ok" && released.handedTo).toBeFalsy();
    expect((await store.mutex.acquire(ref, tryLock(tokenOf("c")))).status).toBe("granted");
  });

  it("lock-delay: a lapsed lease holds everyone off until its end plus the delay; a release does not", async () => {
    const store = newStore();
    const ref = freshRef("mx-delay");
    const a = tokenOf("a");
    const first = await store.mutex.acquire(ref, tryLock(a, SHORT_TTL_MS, { lockDelayMs: 3000 }));
    if (first.status !== "granted") throw new Error(`not granted: ${JSON.stringify(first)}`);
    const delayedUntil = first.grant.expiresAt + 3000;
    const free = await untilStore(
      () => store.mutex.inspect(ref),
      (s) => !s.held,
    );
    expect(free).toEqual({ held: false, fence: first.grant.fence, count: 0, ttlMs: 0, expiresAt: null, holder: null, delayedUntil });
    const busy = await timed(() => store.mutex.acquire(ref, tryLock(tokenOf("b"))));
    expect(busy.value).toEqual({ status: "busy", retryAfterMs: remainingUntil(delayedUntil, busy.t0, busy.t1), queued: false, delayedUntil });

    const other = freshRef("mx-delay-released");
    await store.mutex.acquire(other, tryLock(a, 5000, { lockDelayMs: 2000 }));
    await store.mutex.release(other, { token: a, requestId: requestId() });
    expect((await store.mutex.acquire(other, tryLock(tokenOf("b")))).status).toBe("granted");
  });
}
