// holdfast/client against the real service: the Worker served by workerd over real TCP, on
// both stores, with a real TCP proxy in front for a service that goes away or an answer
// that is lost on the way back.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  FingerprintMismatchError,
  HoldfastClient,
  InvalidRequestError,
  LeaseLostError,
  LeaseReleasedError,
  LockedError,
  UnauthorizedError,
  UnreachableError,
} from "../../src/client/index";
import { type Stores, startOnBothStores, stopAll, until } from "../support/workerServers";
import { startProxy } from "../support/proxy";

const KEY = "client-test-key-123456";
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const aborted = (signal: AbortSignal) =>
  new Promise<number>((resolve) => {
    if (signal.aborted) resolve(Date.now());
    signal.addEventListener("abort", () => resolve(Date.now()), { once: true });
  });

let servers: Stores;

beforeAll(async () => {
  servers = await startOnBothStores({ API_KEYS: `client=${KEY}` }, { url: inject("upstashUrl"), token: inject("upstashToken") });
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
});

for (const kind of ["redis", "durable"] as const) {
  describe(`${kind} store`, () => {
    const client = (baseUrl = servers[kind].url) => new HoldfastClient({ baseUrl, apiKey: KEY });

    it("keeps a lease with a 2 s TTL alive through 5 s of work", async () => {
      const name = unique("keep");
      // 2 s, not 1: its heartbeats come at a third of the TTL, and on a loaded two-core runner a 1 s lease
      // lapsed between two of them (its margin, ~300 ms, is less than a slow round trip there).
      const lease = await client().lock(name, { ttlMs: 2000 });
      await sleep(5000); // the work; the client heartbeats meanwhile
      expect(lease.signal.aborted).toBe(false);
      const state = await client().inspect("mutex", name);
      expect(state).toMatchObject({ held: true, fence: lease.fence });
      await expect(client().lock(name, { ttlMs: 1000 })).rejects.toBeInstanceOf(LockedError);
      await lease.release();
      expect((await client().inspect("mutex", name)).held).toBe(false);
    });

    it("a lease granted after a long wait (over 2/3 of its TTL) is kept, not given up before its first heartbeat", async () => {
      const name = unique("waited");
      const first = await client().lock(name, { ttlMs: 5000 });
      const sentAt = Date.now();
      const waited = client().lock(name, { ttlMs: 3000, waitMs: 10_000 });
      // The second acquire waits over 2/3 of its own TTL (2,000 ms), which leaves its first heartbeat
      // 800 ms less the 300 ms margin to be confirmed. It is in line first, then the time passes.
      await until(
        () => client().inspect("mutex", name),
        (state) => state.waiters === 1,
      );
      await sleep(Math.max(0, sentAt + 2200 - Date.now()));
      await first.release();
      const lease = await waited;
      // Past that acquire's sending time + TTL, counted from when it was sent: only heartbeats keep it now.
      await sleep(Math.max(0, sentAt + 3000 + 500 - Date.now()));
      expect(lease.signal.aborted).toBe(false);
      expect(await client().inspect("mutex", name)).toMatchObject({ held: true, fence: lease.fence });
      await lease.release();
    });

    it("aborts the signal before the lease's local deadline when the service cannot be reached, while nobody else can hold it yet", async () => {
      const proxy = await startProxy(servers[kind].url);
      const name = unique("unreachable");
      const sentAt = Date.now();
      const lease = await new HoldfastClient({ baseUrl: proxy.url, apiKey: KEY, safetyMarginMs: 500 }).lock(name, { ttlMs: 1500 });
      const abortedAt = aborted(lease.signal);
      await proxy.close(); // the service is gone for this client: its port is closed
      const at = await abortedAt;
      expect(at).toBeLessThan(sentAt + 1500);
      expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
      expect(lease.signal.reason.confirmed).toBe(false);
      // At that moment the lease still stands: nobody else could have it yet.
      const other = await client()
        .lock(name, { ttlMs: 1000 })
        .catch((e) => e);
      expect(other).toBeInstanceOf(LockedError);
    });

    it("aborts the signal when the lease is lost (released by an operator)", async () => {
      const name = unique("lost");
      const lease = await client().lock(name, { ttlMs: 3000 });
      const abortedAt = aborted(lease.signal);
      await client().release(lease.toJSON());
      await abortedAt;
      expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
      expect(lease.signal.reason.confirmed).toBe(true);
    });

    it("releases on `await using` scope exit, also when the block throws", async () => {
      const name = unique("using");
      {
        await using lease = await client().lock(name, { ttlMs: 5000 });
        expect((await client().inspect("mutex", name)).held).toBe(true);
        expect(lease.signal.aborted).toBe(false);
      }
      expect((await client().inspect("mutex", name)).held).toBe(false);

      const thrown = new Error("the work failed");
      const run = async () => {
        await using _lease = await client().lock(name, { ttlMs: 5000 });
        throw thrown;
      };
      await expect(run()).rejects.toBe(thrown);
      expect((await client().inspect("mutex", name)).held).toBe(false);
    });

    it("a retried acquire whose first answer was lost applies once", async () => {
      const proxy = await startProxy(servers[kind].url);
      try {
        const name = unique("dropped");
        proxy.dropResponses(1); // the acquire reaches the service; its answer never comes back
        const lease = await client(proxy.url).lock(name, { ttlMs: 5000 });
        expect(await client().inspect("mutex", name)).toMatchObject({ held: true, count: 1, fence: lease.fence });
        await lease.release();
        // No second, orphaned grant: one release leaves it free.
        expect((await client().inspect("mutex", name)).held).toBe(false);
      } finally {
        await proxy.close();
      }
    });

    it("a lease handle resumed by a second client heartbeats and releases there", async () => {
      const name = unique("travel");
      const first = await client().lock(name, { ttlMs: 2000 });
      const handle = JSON.parse(JSON.stringify(first)); // across a queue, a process, a later request
      first.detach();
      expect(first.signal.reason).toBeInstanceOf(LeaseReleasedError);
      const second = await client().resume(handle);
      expect(second.fence).toBe(first.fence);
      await sleep(2500); // past the first TTL: the second client keeps it
      expect(second.signal.aborted).toBe(false);
      expect(await client().inspect("mutex", name)).toMatchObject({ held: true, fence: first.fence });
      await second.release();
      expect((await client().inspect("mutex", name)).held).toBe(false);
      await expect(client().resume(handle)).rejects.toBeInstanceOf(LeaseLostError);
    });

    it("withLock passes the lease and releases after; read-write locks and semaphores share the client", async () => {
      const name = unique("with");
      const fence = await client().withLock(name, { ttlMs: 5000 }, (lease) => lease.fence);
      expect(Number.isSafeInteger(fence)).toBe(true);
      expect((await client().inspect("mutex", name)).held).toBe(false);

      const rw = unique("rw");
      const [r1, r2] = await Promise.all([client().readLock(rw, { ttlMs: 5000 }), client().readLock(rw, { ttlMs: 5000 })]);
      await expect(client().writeLock(rw, { ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
      await Promise.all([r1.release(), r2.release()]);
      await client().withWriteLock(rw, { ttlMs: 5000 }, async () => {
        expect(await client().inspect("rwlock", rw)).toMatchObject({ mode: "write" });
      });

      const sem = unique("sem");
      const a = await client().semaphore(sem, { limit: 2, permits: 2, ttlMs: 5000 });
      expect(a.permits).toBe(2);
      await expect(client().semaphore(sem, { limit: 2, ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
      await a.release();
      expect(await client().inspect("semaphore", sem)).toMatchObject({ used: 0 });
    });

    it("runOnce runs fn once across concurrent callers and replays its stored result", async () => {
      const key = unique("once");
      let runs = 0;
      const job = () =>
        client().runOnce(
          key,
          async (lease) => {
            runs += 1;
            await sleep(300);
            return { fence: lease.fence, runs };
          },
          { ttlMs: 2000, waitMs: 10_000 },
        );
      const [a, b] = await Promise.all([job(), job()]);
      expect(runs).toBe(1);
      expect(b).toEqual(a);
      expect(await job()).toEqual(a);
      const failing = unique("once-fails");
      await expect(client().runOnce(failing, () => Promise.reject(new Error("no")), { ttlMs: 2000 })).rejects.toThrow("no");
      expect(await client().runOnce(failing, () => "second try", { ttlMs: 2000 })).toBe("second try");
    });

    it("a begin that waited is not handed the result of a run with another fingerprint", async () => {
      const key = unique("waited-fp");
      const first = await client().begin(key, { ttlMs: 10_000, fingerprint: "fp-first" });
      if (first.state !== "started") throw new Error("the first begin did not start");
      // The waiter's begin (the same request as the first) is told in_progress. Before it looks again, the
      // first caller gives the key up and another request (another fingerprint) runs it and completes it.
      const realFetch = globalThis.fetch;
      let reused = false;
      const waiterFetch: typeof fetch = async (input, init) => {
        const res = await realFetch(input, init);
        if (res.status === 409 && String(input).endsWith("/begin") && !reused) {
          reused = true;
          await client().fail(first.lease);
          const other = await client().begin(key, { ttlMs: 10_000, fingerprint: "fp-other" });
          if (other.state !== "started") throw new Error("the other request's begin did not start");
          await client().complete(other.lease, { from: "the other request" });
        }
        return res;
      };
      const waiter = new HoldfastClient({ baseUrl: servers[kind].url, apiKey: KEY, fetch: waiterFetch });
      const waited = await waiter.begin(key, { ttlMs: 10_000, fingerprint: "fp-first", waitMs: 10_000 }).catch((e) => e);
      expect(reused).toBe(true);
      expect(waited).toBeInstanceOf(FingerprintMismatchError);
    });

    it("says what went wrong with typed errors carrying the service's code", async () => {
      const name = unique("errors");
      const held = await client().lock(name, { ttlMs: 3000 });
      const locked = await client()
        .lock(name, { ttlMs: 1000 })
        .catch((e) => e);
      expect(locked).toBeInstanceOf(LockedError);
      expect(locked.retryAfterMs).toBeGreaterThan(0);
      const bad = await client()
        .lock(name, { ttlMs: 5 })
        .catch((e) => e);
      expect(bad).toBeInstanceOf(InvalidRequestError);
      expect(bad.code).toBe("invalid_ttl");
      const noKey = await new HoldfastClient({ baseUrl: servers[kind].url, apiKey: "not-a-key-at-all" }).lock(name, { ttlMs: 1000 }).catch((e) => e);
      expect(noKey).toBeInstanceOf(UnauthorizedError);
      await held.release();
    });
  });
}

it("a service that never answers is UnreachableError within the client's timeout, not a hang", async () => {
  const proxy = await startProxy(servers.durable.url);
  await proxy.close();
  const started = Date.now();
  const err = await new HoldfastClient({ baseUrl: proxy.url, apiKey: KEY, timeoutMs: 1000 }).lock(unique("closed"), { ttlMs: 1000 }).catch((e) => e);
  expect(err).toBeInstanceOf(UnreachableError);
  expect(Date.now() - started).toBeLessThan(5000);
});
