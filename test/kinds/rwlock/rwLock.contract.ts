import { expect, it } from "vitest";
import type { RwAcquireInput, RwMode, RwQueuedHolder } from "../../../src/kinds/rwlock/types";
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
 * The read-write lock at the store boundary (RwLockOps: lua/rwlock/*.lua and
 * lua/holders/*.lua against durableRwLock.ts and durableHolders.ts):
 * readers share, a writer excludes, re-entry and the refused upgrade,
 * heartbeat, release, the line's admit step (every reader up to the next
 * writer) and its gate, withdraw, inspect.
 */
export function rwLockContract(newStore: NewStore): void {
  const take = (mode: RwMode, token: string, ttlMs = 5000, extra: Partial<RwAcquireInput> = {}): RwAcquireInput => ({
    mode,
    token,
    reenter: false,
    ttlMs,
    watch: false,
    requestId: requestId(),
    ...extra,
  });
  const queued = (mode: RwMode, token: string, markPickup = true): RwQueuedHolder => ({ mode, token, ttlMs: 4000, watch: false, markPickup });
  const release = (token: string) => ({ token, mode: "any" as const, requestId: requestId() });

  it("readers share the lock and one fence; a writer is busy behind them, told the first reader to end", async () => {
    const store = newStore();
    const ref = freshRef("rw-readers");
    const [r1, r2] = [tokenOf("r1"), tokenOf("r2")];
    const first = await timed(() => store.rwlock.acquire(ref, take("read", r1, 3000, { holder: "reader-1" })));
    expect(first.value).toEqual({
      status: "granted",
      grant: {
        name: ref.name,
        token: r1,
        mode: "read",
        fence: fenceIssuedBetween(first.t0, first.t1),
        ttlMs: 3000,
        expiresAt: timeBetween(first.t0, first.t1, 3000),
        count: 1,
      },
    });
    if (first.value.status !== "granted") return;
    const { fence, expiresAt } = first.value.grant;
    const second = await store.rwlock.acquire(ref, take("read", r2, 6000, { holder: "reader-2" }));
    expect(second).toMatchObject({ status: "granted", grant: { token: r2, mode: "read", fence, ttlMs: 6000, count: 1 } });

    const writer = await timed(() => store.rwlock.acquire(ref, take("write", tokenOf("w"))));
    expect(writer.value).toEqual({
      status: "busy",
      retryAfterMs: remainingUntil(expiresAt, writer.t0, writer.t1),
      queued: false,
      current: { holder: "reader-1", expiresAt },
    });
    expect(await store.rwlock.inspect(ref)).toEqual({
      mode: "read",
      readers: 2,
      writer: false,
      fence,
      holderLabels: ["reader-1", "reader-2"],
      expiresAt,
    });
  });

  it("a writer excludes readers and writers, and gets a fence larger than the readers' before it", async () => {
    const store = newStore();
    const ref = freshRef("rw-writer");
    const r = tokenOf("r");
    const read = await store.rwlock.acquire(ref, take("read", r));
    await store.rwlock.release(ref, release(r));
    const w = tokenOf("w");
    const write = await store.rwlock.acquire(ref, take("write", w, 5000, { holder: "writer" }));
    if (read.status !== "granted" || write.status !== "granted") throw new Error(`not granted: ${JSON.stringify([read, write])}`);
    expect(write.grant.fence).toBeGreaterThan(read.grant.fence);
    const current = { holder: "writer", expiresAt: write.grant.expiresAt };
    for (const mode of ["read", "write"] as const) {
      const busy = await timed(() => store.rwlock.acquire(ref, take(mode, tokenOf(mode))));
      expect(busy.value).toEqual({ status: "busy", retryAfterMs: remainingUntil(current.expiresAt, busy.t0, busy.t1), queued: false, current });
    }
    expect(await store.rwlock.inspect(ref)).toEqual({
      mode: "write",
      readers: 0,
      writer: true,
      fence: write.grant.fence,
      holderLabels: ["writer"],
      expiresAt: write.grant.expiresAt,
    });
  });

  it("re-entry counts per mode (a retry gets the first answer); a reader asking to write is refused as an upgrade; a stranger is lost", async () => {
    const store = newStore();
    const ref = freshRef("rw-reenter");
    const w = tokenOf("w");
    const first = await store.rwlock.acquire(ref, take("write", w));
    if (first.status !== "granted") throw new Error(`not granted: ${JSON.stringify(first)}`);
    const again = take("write", w, 7000, { reenter: true });
    const second = await timed(() => store.rwlock.acquire(ref, again));
    expect(second.value).toEqual({
      status: "granted",
      grant: {
        name: ref.name,
        token: w,
        mode: "write",
        fence: first.grant.fence,
        ttlMs: 7000,
        expiresAt: timeBetween(second.t0, second.t1, 7000),
        count: 2,
      },
    });
    expect(await store.rwlock.acquire(ref, again)).toEqual(second.value);
    // The writer may also read (count 1 in read mode).
    expect(await store.rwlock.acquire(ref, take("read", w, 7000, { reenter: true }))).toMatchObject({
      status: "granted",
      grant: { mode: "read", count: 1 },
    });
    expect(await store.rwlock.acquire(ref, take("read", tokenOf("x"), 5000, { reenter: true }))).toEqual({ status: "lost" });

    const readRef = freshRef("rw-upgrade");
    const r = tokenOf("r");
    await store.rwlock.acquire(readRef, take("read", r));
    expect(await store.rwlock.acquire(readRef, take("write", r, 5000, { reenter: true }))).toEqual({ status: "upgrade" });
  });

  it("release counts down by mode ('any' takes the write hold first); a token that holds nothing is lost", async () => {
    const store = newStore();
    const ref = freshRef("rw-release");
    const w = tokenOf("w");
    await store.rwlock.acquire(ref, take("write", w));
    await store.rwlock.acquire(ref, take("read", w, 5000, { reenter: true }));
    expect(await store.rwlock.release(ref, release(w))).toEqual({
      status: "ok",
      released: false,
      mode: "write",
      count: 0,
      watched: false,
      waiters: false,
    });
    expect(await store.rwlock.inspect(ref)).toMatchObject({ mode: "read", readers: 1, writer: false });
    expect(await store.rwlock.release(ref, release(w))).toEqual({
      status: "ok",
      released: true,
      mode: "read",
      count: 0,
      watched: false,
      waiters: false,
    });
    expect(await store.rwlock.release(ref, release(w))).toEqual({ status: "lost" });
    expect(await store.rwlock.release(ref, { token: tokenOf("x"), mode: "read", requestId: requestId() })).toEqual({ status: "lost" });
    expect(await store.rwlock.inspect(ref)).toMatchObject({ mode: "free", readers: 0, writer: false });
  });

  it("a heartbeat renews one holder's lease; a lapsed reader is gone and its token lost", async () => {
    const store = newStore();
    const ref = freshRef("rw-heartbeat");
    const [a, b] = [tokenOf("a"), tokenOf("b")];
    const first = await store.rwlock.acquire(ref, take("read", a, 3000));
    await store.rwlock.acquire(ref, take("read", b, SHORT_TTL_MS));
    if (first.status !== "granted") throw new Error(`not granted: ${JSON.stringify(first)}`);
    const beat = await timed(() => store.rwlock.heartbeat(ref, { token: a, ttlMs: 8000 }));
    expect(beat.value).toEqual({ status: "ok", expiresAt: timeBetween(beat.t0, beat.t1, 8000), ttlMs: 8000, fence: first.grant.fence });
    const plain = await timed(() => store.rwlock.heartbeat(ref, { token: a }));
    expect(plain.value).toEqual({ status: "ok", expiresAt: timeBetween(plain.t0, plain.t1, 3000), ttlMs: 3000, fence: first.grant.fence });

    await untilStore(
      () => store.rwlock.inspect(ref),
      (s) => s.readers === 1,
    );
    expect(await store.rwlock.heartbeat(ref, { token: b })).toEqual({ status: "lost" });
    expect(await store.rwlock.watch(ref, { fence: first.grant.fence, token: b })).toEqual({ state: "lapsed" });
    expect(await store.rwlock.watch(ref, { fence: first.grant.fence, token: a })).toMatchObject({ state: "held" });
  });

  it("admit grants every reader up to the next writer in one step, and the gate keeps try-locks behind the writer left waiting", async () => {
    const store = newStore();
    const ref = freshRef("rw-admit");
    const holder = tokenOf("holder");
    const [r1, r2, w3, r4] = [tokenOf("r1"), tokenOf("r2"), tokenOf("w3"), tokenOf("r4")];
    const held = await store.rwlock.acquire(ref, take("write", holder, 5000));
    if (held.status !== "granted") throw new Error(`not granted: ${JSON.stringify(held)}`);
    const line = [queued("read", r1), queued("read", r2), queued("write", w3), queued("read", r4)];

    // Held by a writer: nobody at the front can be granted; the first is left in the gate.
    const blocked = await timed(() => store.rwlock.admit(ref, line, false));
    expect(blocked.value).toEqual({ granted: [], refused: [], retryAfterMs: remainingUntil(held.grant.expiresAt, blocked.t0, blocked.t1) });
    expect(await store.rwlock.release(ref, release(holder))).toMatchObject({ status: "ok", released: true, waiters: true });
    // Free, but the gate is there: a try-lock does not barge in.
    expect(await store.rwlock.acquire(ref, take("read", tokenOf("barger")))).toEqual({ status: "busy", retryAfterMs: 100, queued: true });

    const step = await timed(() => store.rwlock.admit(ref, line, false));
    expect(step.value).toEqual({
      granted: [
        {
          name: ref.name,
          token: r1,
          mode: "read",
          fence: fenceIssuedBetween(step.t0, step.t1),
          ttlMs: 4000,
          expiresAt: timeBetween(step.t0, step.t1, 4000),
          count: 1,
        },
        { name: ref.name, token: r2, mode: "read", fence: expect.any(Number), ttlMs: 4000, expiresAt: timeBetween(step.t0, step.t1, 4000), count: 1 },
      ],
      refused: [],
      // The writer left waiting is told the readers' end, from the step's own clock: exactly their ttl.
      retryAfterMs: 4000,
    });
    expect(step.value.granted[1].fence).toBe(step.value.granted[0].fence);
    expect(await store.rwlock.acquire(ref, take("read", tokenOf("barger")))).toEqual({ status: "busy", retryAfterMs: 100, queued: true });

    // Both readers gone: the writer is next, and the reader behind it waits for it (no overtaking).
    await store.rwlock.release(ref, release(r1));
    await store.rwlock.release(ref, release(r2));
    const next = await store.rwlock.admit(ref, [queued("write", w3), queued("read", r4)], false);
    expect(next).toMatchObject({ granted: [{ token: w3, mode: "write" }], refused: [] });
    expect(next.granted[0].fence).toBeGreaterThan(step.value.granted[0].fence);
    expect(next.retryAfterMs).toBeGreaterThan(0);
    expect(await store.rwlock.inspect(ref)).toMatchObject({ mode: "write", writer: true, readers: 0 });
  });

  it("admit with an empty store and nobody behind grants and drops the gate; with more behind it leaves a gate", async () => {
    const store = newStore();
    const ref = freshRef("rw-admit-free");
    const r1 = tokenOf("r1");
    expect(await store.rwlock.admit(ref, [queued("read", r1)], true)).toMatchObject({ granted: [{ token: r1 }], refused: [] });
    // More waiters behind: a writer's try-lock stays out even though it could not barge past readers anyway; a reader too.
    expect(await store.rwlock.acquire(ref, take("read", tokenOf("barger")))).toEqual({ status: "busy", retryAfterMs: 100, queued: true });
    await store.rwlock.ungate(ref);
    expect((await store.rwlock.acquire(ref, take("read", tokenOf("reader")))).status).toBe("granted");
  });

  it("withdraw: the gated waiter is unregistered; a grant still marked for pickup is taken back when unclaimed, an unmarked one is not", async () => {
    const store = newStore();
    const ref = freshRef("rw-withdraw");
    const holder = tokenOf("holder");
    const [w1, marked, unmarked] = [tokenOf("w1"), tokenOf("marked"), tokenOf("unmarked")];
    await store.rwlock.acquire(ref, take("write", holder));
    await store.rwlock.admit(ref, [queued("write", w1)], false);
    expect(await store.rwlock.withdraw(ref, { token: w1, reason: "left" })).toEqual({ status: "unregistered" });
    await store.rwlock.release(ref, release(holder));

    const step = await store.rwlock.admit(ref, [queued("read", marked, true), queued("read", unmarked, false)], false);
    expect(step.granted.map((g) => g.token)).toEqual([marked, unmarked]);
    expect(await store.rwlock.withdraw(ref, { token: marked, reason: "unclaimed" })).toEqual({ status: "revoked", fence: step.granted[0].fence });
    expect(await store.rwlock.withdraw(ref, { token: unmarked, reason: "unclaimed" })).toEqual({ status: "none" });
    expect(await store.rwlock.withdraw(ref, { token: unmarked, reason: "left" })).toEqual({ status: "revoked", fence: step.granted[1].fence });
    expect(await store.rwlock.inspect(ref)).toMatchObject({ mode: "free", readers: 0 });
  });
}
