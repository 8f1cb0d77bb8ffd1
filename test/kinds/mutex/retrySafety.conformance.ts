import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { selectStore } from "../../../src/worker/stores.js";
import { MUTEX } from "../../../src/kinds/mutex/types.js";
import { RWLOCK } from "../../../src/kinds/rwlock/types.js";
import { kindOps } from "../../../src/store/types.js";
import { newOwnerToken, newRequestId } from "../../../src/tokens.js";
import { pollUntil } from "../../support/pollUntil.js";
import { envFor, type StoreKind, uniqueName } from "../../support/workers/api.js";

/**
 * The Upstash client retries a request after a network error, so a script
 * may run twice for one request. Replaying the same request id (what such a
 * retry does) must not count twice, on either store.
 */
export function retrySafetyConformance(kind: StoreKind) {
  const store = () => {
    const s = selectStore(envFor(kind));
    return { kind: s.kind, mutex: kindOps(s, MUTEX), rwlock: kindOps(s, RWLOCK) };
  };
  const ref = () => ({ ns: "tenant-a", name: uniqueName("retry") });

  it("a repeated acquire gets the same grant and does not count twice", async () => {
    const r = ref();
    const input = { token: newOwnerToken(), mode: "new" as const, ttlMs: 5000, requestId: newRequestId(), watch: false };
    const first = await store().mutex.acquire(r, input);
    const again = await store().mutex.acquire(r, input);
    expect(first.status).toBe("granted");
    expect(again).toEqual(first);
    expect(await store().mutex.inspect(r)).toMatchObject({ held: true, count: 1 });
  });

  it("a repeated re-entry raises the count once", async () => {
    const r = ref();
    const token = newOwnerToken();
    await store().mutex.acquire(r, { token, mode: "new" as const, ttlMs: 5000, requestId: newRequestId(), watch: false });
    const reenter = { token, mode: "reenter" as const, ttlMs: 5000, requestId: newRequestId(), watch: false };
    await store().mutex.acquire(r, reenter);
    await store().mutex.acquire(r, reenter);
    expect((await store().mutex.inspect(r)).count).toBe(2);
  });

  it("a repeated release drops one level and answers the same", async () => {
    const r = ref();
    const token = newOwnerToken();
    await store().mutex.acquire(r, { token, mode: "new" as const, ttlMs: 5000, requestId: newRequestId(), watch: false });
    await store().mutex.acquire(r, { token, mode: "reenter" as const, ttlMs: 5000, requestId: newRequestId(), watch: false });
    const release = { token, requestId: newRequestId() };
    const first = await store().mutex.release(r, release);
    const again = await store().mutex.release(r, release);
    expect(first).toMatchObject({ status: "ok", released: false, count: 1 });
    expect(again).toEqual(first);
    expect((await store().mutex.inspect(r)).count).toBe(1);
    const last = { token, requestId: newRequestId() };
    const final = await store().mutex.release(r, last);
    expect(await store().mutex.release(r, last)).toEqual(final);
    expect(final).toMatchObject({ status: "ok", released: true, count: 0 });
  });

  it("a late copy of an earlier inner release, after a later one, drops no level: the holder still holds its last", async () => {
    const r = ref();
    const token = newOwnerToken();
    const reenter = () => ({ token, mode: "reenter" as const, ttlMs: 5000, requestId: newRequestId(), watch: false });
    await store().mutex.acquire(r, { token, mode: "new" as const, ttlMs: 5000, requestId: newRequestId(), watch: false });
    await store().mutex.acquire(r, reenter());
    await store().mutex.acquire(r, reenter());
    const [r1, r2] = [
      { token, requestId: newRequestId() },
      { token, requestId: newRequestId() },
    ];
    const first = await store().mutex.release(r, r1);
    expect(first).toMatchObject({ status: "ok", released: false, count: 2 });
    expect(await store().mutex.release(r, r2)).toMatchObject({ status: "ok", released: false, count: 1 });
    // The network delivers r1 again (a client's retry arriving late): it replays r1's answer.
    expect(await store().mutex.release(r, r1)).toEqual(first);
    expect(await store().mutex.inspect(r)).toMatchObject({ held: true, count: 1 });
    const other = await store().mutex.acquire(r, {
      token: newOwnerToken(),
      mode: "new" as const,
      ttlMs: 5000,
      requestId: newRequestId(),
      watch: false,
    });
    expect(other.status).toBe("busy");
  });

  // A re-entry's answer was lost, its client retried too late: the lease lapsed and another took the lock.
  // The store remembers the re-entry's grant, but the lease it names no longer stands: replayed, it would
  // tell the client it holds a lock another holds.
  it("a re-entry repeated after its lease lapsed and another took the lock is answered lost, not its earlier grant", async () => {
    const r = ref();
    const token = newOwnerToken();
    await store().mutex.acquire(r, { token, mode: "new" as const, ttlMs: 300, requestId: newRequestId(), watch: false });
    const reenter = { token, mode: "reenter" as const, ttlMs: 300, requestId: newRequestId(), watch: false };
    expect((await store().mutex.acquire(r, reenter)).status).toBe("granted");
    const other = { token: newOwnerToken(), mode: "new" as const, ttlMs: 60_000, requestId: newRequestId(), watch: false };
    await pollUntil(
      () => store().mutex.acquire(r, other),
      (a) => a.status === "granted",
      10_000,
    );
    expect(await store().mutex.acquire(r, reenter)).toEqual({ status: "lost" });
  });

  it("a read-write lock's re-entry repeated after its lease lapsed and another took the lock is answered lost", async () => {
    const r = ref();
    const token = newOwnerToken();
    const lease = { token, mode: "write" as const, ttlMs: 300, watch: false };
    await store().rwlock.acquire(r, { ...lease, reenter: false, requestId: newRequestId() });
    const reenter = { ...lease, reenter: true, requestId: newRequestId() };
    expect((await store().rwlock.acquire(r, reenter)).status).toBe("granted");
    const other = { token: newOwnerToken(), mode: "write" as const, ttlMs: 60_000, watch: false, reenter: false, requestId: newRequestId() };
    await pollUntil(
      () => store().rwlock.acquire(r, other),
      (a) => a.status === "granted",
      10_000,
    );
    expect(await store().rwlock.acquire(r, reenter)).toEqual({ status: "lost" });
  });

  it(`answers from the ${kind} store`, () => {
    expect(store().kind).toBe(kind);
    expect(env.LOCK_OBJECT).toBeDefined();
  });
}
