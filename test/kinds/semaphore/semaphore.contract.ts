import { expect, it } from "vitest";
import type { SemaphoreAcquireInput, SemaphoreQueuedHolder } from "../../../src/kinds/semaphore/types";
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
 * The counting semaphore at the store boundary (SemaphoreOps:
 * lua/semaphore/*.lua and lua/holders/*.lua against durableSemaphore.ts and
 * durableHolders.ts): permits that fit, the holders' limit, heartbeat,
 * release, the line's admit step (permits that fit, stopping at the first
 * that does not; another limit refused), withdraw, inspect, fences.
 */
export function semaphoreContract(newStore: NewStore): void {
  const take = (token: string, permits: number, limit = 3, ttlMs = 5000, extra: Partial<SemaphoreAcquireInput> = {}): SemaphoreAcquireInput => ({
    token,
    permits,
    limit,
    ttlMs,
    watch: false,
    ...extra,
  });
  const queued = (token: string, permits: number, limit = 3, markPickup = true): SemaphoreQueuedHolder => ({
    token,
    permits,
    limit,
    ttlMs: 4000,
    watch: false,
    markPickup,
  });
  const release = (token: string) => ({ token, requestId: requestId() });

  it("permits are granted while they fit, each holder with its own larger fence; one that does not fit is busy, told the first to end", async () => {
    const store = newStore();
    const ref = freshRef("sem-fit");
    const [a, b] = [tokenOf("a"), tokenOf("b")];
    const first = await timed(() => store.semaphore.acquire(ref, take(a, 2, 3, 3000, { holder: "job-a" })));
    expect(first.value).toEqual({
      status: "granted",
      grant: {
        name: ref.name,
        token: a,
        permits: 2,
        limit: 3,
        fence: fenceIssuedBetween(first.t0, first.t1),
        ttlMs: 3000,
        expiresAt: timeBetween(first.t0, first.t1, 3000),
        available: 1,
      },
    });
    const second = await store.semaphore.acquire(ref, take(b, 1, 3, 6000, { holder: "job-b" }));
    expect(second).toMatchObject({ status: "granted", grant: { token: b, permits: 1, limit: 3, available: 0 } });
    if (first.value.status !== "granted" || second.status !== "granted") return;
    expect(second.grant.fence).toBeGreaterThan(first.value.grant.fence);

    const busy = await timed(() => store.semaphore.acquire(ref, take(tokenOf("c"), 1)));
    expect(busy.value).toEqual({
      status: "busy",
      retryAfterMs: remainingUntil(first.value.grant.expiresAt, busy.t0, busy.t1),
      queued: false,
      current: { holder: "job-a", expiresAt: first.value.grant.expiresAt },
    });
    expect(await store.semaphore.inspect(ref)).toEqual({
      limit: 3,
      used: 3,
      holders: 2,
      holderLabels: ["job-a", "job-b"],
      expiresAt: first.value.grant.expiresAt,
    });
  });

  it("while anyone holds, another limit is refused with the holders' limit; once free, the next acquire sets it", async () => {
    const store = newStore();
    const ref = freshRef("sem-limit");
    const a = tokenOf("a");
    await store.semaphore.acquire(ref, take(a, 1, 3));
    expect(await store.semaphore.acquire(ref, take(tokenOf("b"), 1, 5))).toEqual({ status: "limit_mismatch", limit: 3 });
    await store.semaphore.release(ref, release(a));
    expect(await store.semaphore.inspect(ref)).toEqual({ limit: null, used: 0, holders: 0, holderLabels: [], expiresAt: null });
    expect(await store.semaphore.acquire(ref, take(tokenOf("c"), 4, 5))).toMatchObject({ status: "granted", grant: { limit: 5, available: 1 } });
  });

  it("an acquire retried with the holder's own token is its own grant again, not more permits", async () => {
    const store = newStore();
    const ref = freshRef("sem-retry");
    const a = tokenOf("a");
    const first = await store.semaphore.acquire(ref, take(a, 2));
    expect(await store.semaphore.acquire(ref, take(a, 2))).toEqual(first);
    expect(await store.semaphore.inspect(ref)).toMatchObject({ used: 2, holders: 1 });
  });

  it("release frees the holder's permits (a retried release gets the first answer); a token that holds nothing is lost", async () => {
    const store = newStore();
    const ref = freshRef("sem-release");
    const [a, b] = [tokenOf("a"), tokenOf("b")];
    await store.semaphore.acquire(ref, take(a, 2));
    await store.semaphore.acquire(ref, take(b, 1));
    const input = release(a);
    const first = await store.semaphore.release(ref, input);
    expect(first).toEqual({ status: "ok", permits: 2, available: 2, watched: false, waiters: false });
    expect(await store.semaphore.release(ref, input)).toEqual(first);
    expect(await store.semaphore.release(ref, release(a))).toEqual({ status: "lost" });
    expect(await store.semaphore.release(ref, release(tokenOf("x")))).toEqual({ status: "lost" });
    expect(await store.semaphore.inspect(ref)).toMatchObject({ limit: 3, used: 1, holders: 1 });
  });

  it("a heartbeat renews one holder; a lapsed holder's permits are free again and its token lost", async () => {
    const store = newStore();
    const ref = freshRef("sem-lapse");
    const [a, b] = [tokenOf("a"), tokenOf("b")];
    const first = await store.semaphore.acquire(ref, take(a, 1, 2, 3000));
    await store.semaphore.acquire(ref, take(b, 1, 2, SHORT_TTL_MS));
    if (first.status !== "granted") throw new Error(`not granted: ${JSON.stringify(first)}`);
    const beat = await timed(() => store.semaphore.heartbeat(ref, { token: a, ttlMs: 8000 }));
    expect(beat.value).toEqual({ status: "ok", expiresAt: timeBetween(beat.t0, beat.t1, 8000), ttlMs: 8000, fence: first.grant.fence });
    expect(await store.semaphore.heartbeat(ref, { token: tokenOf("x") })).toEqual({ status: "lost" });

    await untilStore(
      () => store.semaphore.inspect(ref),
      (s) => s.used === 1,
    );
    expect(await store.semaphore.heartbeat(ref, { token: b })).toEqual({ status: "lost" });
    expect(await store.semaphore.release(ref, release(b))).toEqual({ status: "lost" });
    expect(await store.semaphore.acquire(ref, take(tokenOf("c"), 1, 2))).toMatchObject({ status: "granted", grant: { available: 0 } });
  });

  it("admit grants in order while permits fit and stops at the first that does not: smaller ones behind it wait (no overtaking)", async () => {
    const store = newStore();
    const ref = freshRef("sem-admit");
    const holder = tokenOf("holder");
    const [big, small] = [tokenOf("big"), tokenOf("small")];
    const held = await store.semaphore.acquire(ref, take(holder, 2, 3, 5000));
    if (held.status !== "granted") throw new Error(`not granted: ${JSON.stringify(held)}`);

    // 2 of 3 used: big (2) does not fit, so small (1), which would, is not granted either.
    const blocked = await timed(() => store.semaphore.admit(ref, [queued(big, 2), queued(small, 1)], false));
    expect(blocked.value).toEqual({ granted: [], refused: [], retryAfterMs: remainingUntil(held.grant.expiresAt, blocked.t0, blocked.t1) });
    // Free permits, but the gate keeps a try-lock behind the line.
    expect(await store.semaphore.acquire(ref, take(tokenOf("barger"), 1))).toEqual({ status: "busy", retryAfterMs: 100, queued: true });
    expect(await store.semaphore.release(ref, release(holder))).toEqual({ status: "ok", permits: 2, available: 3, watched: false, waiters: true });

    const step = await timed(() => store.semaphore.admit(ref, [queued(big, 2), queued(small, 1)], false));
    const grant = (token: string, permits: number) => ({
      name: ref.name,
      token,
      permits,
      limit: 3,
      fence: fenceIssuedBetween(step.t0, step.t1),
      ttlMs: 4000,
      expiresAt: timeBetween(step.t0, step.t1, 4000),
      available: 0,
    });
    expect(step.value).toEqual({ granted: [grant(big, 2), grant(small, 1)], refused: [] });
    expect(step.value.granted[1].fence).toBeGreaterThan(step.value.granted[0].fence);
    // Nobody left in line: the gate is gone, and with permits free a try-lock is granted.
    await store.semaphore.release(ref, release(small));
    expect((await store.semaphore.acquire(ref, take(tokenOf("late"), 1))).status).toBe("granted");
  });

  it("admit refuses a waiter whose limit differs from the holders' and moves on to the next", async () => {
    const store = newStore();
    const ref = freshRef("sem-refuse");
    await store.semaphore.acquire(ref, take(tokenOf("holder"), 1, 3));
    const [other, fits] = [tokenOf("other"), tokenOf("fits")];
    const step = await store.semaphore.admit(ref, [queued(other, 1, 5), queued(fits, 1, 3)], false);
    expect(step).toEqual({
      granted: [expect.objectContaining({ token: fits, permits: 1, limit: 3, available: 1 })],
      refused: [{ token: other, code: "limit_mismatch", message: "the holders use limit 3" }],
    });
  });

  it("withdraw: the gated waiter is unregistered; an unclaimed grant is taken back only while marked for pickup", async () => {
    const store = newStore();
    const ref = freshRef("sem-withdraw");
    const holder = tokenOf("holder");
    const [gated, marked, unmarked] = [tokenOf("gated"), tokenOf("marked"), tokenOf("unmarked")];
    await store.semaphore.acquire(ref, take(holder, 3));
    await store.semaphore.admit(ref, [queued(gated, 1)], false);
    expect(await store.semaphore.withdraw(ref, { token: gated, reason: "left" })).toEqual({ status: "unregistered" });
    expect(await store.semaphore.withdraw(ref, { token: gated, reason: "left" })).toEqual({ status: "none" });
    await store.semaphore.release(ref, release(holder));

    const step = await store.semaphore.admit(ref, [queued(marked, 1, 3, true), queued(unmarked, 1, 3, false)], false);
    expect(step.granted.map((g) => g.token)).toEqual([marked, unmarked]);
    expect(await store.semaphore.withdraw(ref, { token: marked, reason: "unclaimed" })).toEqual({ status: "revoked", fence: step.granted[0].fence });
    expect(await store.semaphore.withdraw(ref, { token: unmarked, reason: "unclaimed" })).toEqual({ status: "none" });
    expect(await store.semaphore.inspect(ref)).toMatchObject({ used: 1, holders: 1 });
  });
}
