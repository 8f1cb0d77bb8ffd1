import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LockedError, Mutex } from "holdfast";
import { HoldfastClient } from "../../src/client/index";
import { RedisFence, StaleFenceError } from "../../src/fence/index.js";
import { startWorkerServer, type WorkerServer } from "../../tools/serve-worker/serve.mjs";
import { until } from "../support/workerServers";

/**
 * Claim on grant (holdfast/fence), Kleppmann's scenario: holder A (fence a)
 * pauses past its lease; B is granted and, with claim on grant, the resource
 * hears of B's fence before B writes anything; A wakes and writes. Without the
 * claim that write is accepted (the resource has seen no newer fence yet);
 * with it, refused. The resource is a key in a real Redis behind the project's
 * gateway; the lock is the library's Mutex over the same database, and the
 * client's lock on the Worker served by workerd (Durable store).
 */
const redis = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") });
const fence = new RedisFence(redis);
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** A pauses: it stops heartbeating and its lease lapses on the store's clock. */
const lapsed = (lock: Mutex) =>
  until(
    () => lock.inspect(),
    (s) => !s.held,
  );

describe("claim on grant, library Mutex", () => {
  it("refuses the paused holder's first late write once the next grant claimed the resource", async () => {
    const lock = new Mutex(redis, unique("claim"));
    const resource = unique("orders");
    const a = await lock.acquire({ ttlMs: 150 });
    await lapsed(lock);
    const b = await lock.acquire({ ttlMs: 5000, claim: { store: fence, resources: [resource] } });
    expect(b.fence).toBeGreaterThan(a.fence);

    const err = await fence.set(resource, a.fence, "written by A, late").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StaleFenceError);
    expect(err).toMatchObject({ resource, fence: a.fence, current: b.fence });
    expect(await redis.get(resource)).toBeNull();
    await fence.set(resource, b.fence, "written by B");
    expect(await redis.get(resource)).toBe("written by B");
  });

  it("without the claim, the same late write is accepted: the gap claim on grant closes", async () => {
    const lock = new Mutex(redis, unique("noclaim"));
    const resource = unique("orders");
    const a = await lock.acquire({ ttlMs: 150 });
    await lapsed(lock);
    const b = await lock.acquire({ ttlMs: 5000 });
    await fence.set(resource, a.fence, "written by A, late");
    expect(await redis.get(resource)).toBe("written by A, late");
    // B's first write then moves the fence on, and only from then is A refused.
    await fence.set(resource, b.fence, "written by B");
    await expect(fence.set(resource, a.fence, "A again")).rejects.toBeInstanceOf(StaleFenceError);
  });

  it("gives the grant back when a claim is refused", async () => {
    const lock = new Mutex(redis, unique("refused"));
    const resource = unique("orders");
    await fence.claim(resource, 2 ** 53 - 1);
    const err = await lock.acquire({ ttlMs: 5000, claim: { store: fence, resources: [resource] } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StaleFenceError);
    expect((await lock.inspect()).held).toBe(false);
  });

  it("refuses a bad claim option before taking the lock", async () => {
    const lock = new Mutex(redis, unique("badclaim"));
    await expect(lock.acquire({ ttlMs: 5000, claim: { store: fence, resources: [] } })).rejects.toMatchObject({ code: "invalid_resource" });
    await expect(lock.acquire({ ttlMs: 5000, claim: { store: {} as never, resources: ["r"] } })).rejects.toMatchObject({ code: "invalid_value" });
    expect((await lock.inspect()).held).toBe(false);
    await expect(lock.acquire({ ttlMs: 5000, waitMs: 0 })).resolves.toMatchObject({ count: 1 });
    await expect(lock.acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
  });
});

describe("claim on grant, holdfast/client", () => {
  const KEY = "fence-claim-key-123456";
  let server: WorkerServer;
  beforeAll(async () => {
    server = await startWorkerServer({ vars: { API_KEYS: `fence=${KEY}` } });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });
  const client = () => new HoldfastClient({ baseUrl: server.url, apiKey: KEY });

  /** A is granted, then pauses: it stops heartbeating (as a process stopped by a GC pause or a partition would). */
  async function pausedHolder(name: string) {
    // 1 s: long enough for the first grant of a cold Worker to be picked up before it lapses.
    const a = await client().lock(name, { ttlMs: 1000 });
    a.detach();
    return a;
  }

  it("refuses the paused holder's late write from the moment the next lease begins", async () => {
    const name = unique("claim");
    const resource = unique("orders");
    const a = await pausedHolder(name);
    await using b = await client().lock(name, { ttlMs: 5000, waitMs: 10_000, claim: { store: fence, resources: [resource] } });
    expect(b.fence).toBeGreaterThan(a.fence);
    await expect(fence.set(resource, a.fence, "A, late")).rejects.toMatchObject({ code: "stale_fence", fence: a.fence, current: b.fence });
    expect(await redis.get(resource)).toBeNull();
  });

  it("lease.claim(store, resource) claims with the lease's own fence; without any claim A's late write goes through", async () => {
    const name = unique("claim");
    const [claimed, unclaimed] = [unique("orders"), unique("orders")];
    const a = await pausedHolder(name);
    await using b = await client().lock(name, { ttlMs: 5000, waitMs: 10_000 });
    expect(await b.claim(fence, claimed)).toEqual({ previous: null });
    await expect(fence.set(claimed, a.fence, "A, late")).rejects.toBeInstanceOf(StaleFenceError);
    await fence.set(unclaimed, a.fence, "A, late");
    expect(await redis.get(unclaimed)).toBe("A, late");
  });
});
