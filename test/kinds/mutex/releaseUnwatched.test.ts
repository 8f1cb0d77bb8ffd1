import { Redis } from "@upstash/redis";
import { describe, expect, inject, it } from "vitest";
import { Mutex, RedisStore } from "holdfast";

/**
 * The library releases with lua/mutex/release_unwatched.lua (two keys) and
 * falls back to release.lua (six) for a lease that needs more: these show
 * the fallback keeps every behaviour of the full release, against a real
 * redis-server behind the project's Upstash gateway.
 */
const redis = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") });
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
const ref = () => ({ ns: "default", name: unique("unwatched") });
const requestId = () => unique("rq");

describe("a release that expects nobody to watch the lease", () => {
  const store = new RedisStore(redis);

  it("still hands the lock to the waiter a lock object registered behind it", async () => {
    const lock = ref();
    await store.mutex.acquire(lock, { token: "holder", mode: "new", ttlMs: 5000, requestId: requestId(), watch: false });
    const queued = await store.mutex.acquire(lock, { token: "waiter", mode: "queue", ttlMs: 5000, requestId: requestId(), watch: false });
    expect(queued.status).toBe("busy");
    const r = await store.mutex.release(lock, { token: "holder", requestId: requestId(), expectUnwatched: true });
    expect(r).toMatchObject({ status: "ok", released: true, watched: true, handedTo: { token: "waiter", count: 1 } });
    expect(await redis.hget(`hf:{mx:default:${lock.name}}`, "owner")).toBe("waiter");
  });

  it("ends a lease's lock-delay with it, so the lock is free at once", async () => {
    const lock = ref();
    await store.mutex.acquire(lock, { token: "holder", mode: "new", ttlMs: 5000, requestId: requestId(), watch: false, lockDelayMs: 60_000 });
    expect(await store.mutex.release(lock, { token: "holder", requestId: requestId(), expectUnwatched: true })).toMatchObject({ released: true });
    const next = await store.mutex.acquire(lock, { token: "next", mode: "new", ttlMs: 5000, requestId: requestId(), watch: false });
    expect(next.status).toBe("granted");
  });

  it("is answered the same by either release script when retried: a final release replays, an inner one drops one level only", async () => {
    const lock = ref();
    const acquire = (mode: "new" | "reenter") => store.mutex.acquire(lock, { token: "t", mode, ttlMs: 5000, requestId: requestId(), watch: false });
    await acquire("new");
    await acquire("reenter");
    const inner = requestId();
    const first = await store.mutex.release(lock, { token: "t", requestId: inner });
    expect(first).toMatchObject({ released: false, count: 1 });
    expect(await store.mutex.release(lock, { token: "t", requestId: inner, expectUnwatched: true })).toEqual(first);
    const final = requestId();
    const last = await store.mutex.release(lock, { token: "t", requestId: final, expectUnwatched: true });
    expect(last).toMatchObject({ released: true, count: 0 });
    expect(await store.mutex.release(lock, { token: "t", requestId: final })).toEqual(last);
  });

  it("a Mutex that asked for a lock-delay releases with the full script at once (one round trip)", async () => {
    const lock = new Mutex(redis, unique("delayed"));
    const sent: string[] = [];
    const original = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(String(init?.body ?? ""));
      return original(input, init);
    }) as typeof fetch;
    try {
      const grant = await lock.acquire({ ttlMs: 5000, lockDelayMs: 1000 });
      sent.length = 0;
      expect(await lock.release(grant.token)).toMatchObject({ released: true });
      expect(sent).toHaveLength(1);
    } finally {
      globalThis.fetch = original;
    }
    expect((await lock.acquire({ ttlMs: 5000 })).count).toBe(1); // its delay went with the release
  });

  it("a late copy of an earlier inner release, after a later one, drops no level: the holder still holds its last (the library's release)", async () => {
    // The library's form of the Worker's case (test/kinds/mutex/retrySafety.conformance.ts): Upstash's client sends a
    // request again when its answer was lost, so an inner release can reach Redis twice, the copy after a later release.
    const lock = ref();
    const acquire = (mode: "new" | "reenter") => store.mutex.acquire(lock, { token: "t", mode, ttlMs: 5000, requestId: requestId(), watch: false });
    await acquire("new");
    await acquire("reenter");
    await acquire("reenter");
    const [r1, r2] = [requestId(), requestId()];
    const release = (id: string) => store.mutex.release(lock, { token: "t", requestId: id, expectUnwatched: true });
    const first = await release(r1);
    expect(first).toMatchObject({ status: "ok", released: false, count: 2 });
    expect(await release(r2)).toMatchObject({ status: "ok", released: false, count: 1 });
    // r1 again: its answer replayed, no level dropped.
    expect(await release(r1)).toEqual(first);
    expect(await store.mutex.inspect(lock)).toMatchObject({ held: true, count: 1 });
    const other = await store.mutex.acquire(lock, { token: "other", mode: "new", ttlMs: 5000, requestId: requestId(), watch: false });
    expect(other.status).toBe("busy");
  });
});
