import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { selectStore } from "../../../src/worker/stores.js";
import { MUTEX } from "../../../src/kinds/mutex/types.js";
import { kindOps } from "../../../src/store/types.js";
import { newOwnerToken, newRequestId } from "../../../src/tokens.js";
import { envFor, type StoreKind, uniqueName } from "../../support/workers/api.js";

/**
 * The Upstash client retries a request after a network error, so a script
 * may run twice for one request. Replaying the same request id (what such a
 * retry does) must not count twice, on either store.
 */
export function retrySafetyConformance(kind: StoreKind) {
  const store = () => {
    const s = selectStore(envFor(kind));
    return { kind: s.kind, mutex: kindOps(s, MUTEX) };
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

  it(`answers from the ${kind} store`, () => {
    expect(store().kind).toBe(kind);
    expect(env.LOCK_OBJECT).toBeDefined();
  });
}
