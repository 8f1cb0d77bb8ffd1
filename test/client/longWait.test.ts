// holdfast/client waits longer than one request may (the service's 60 s per request), against the
// Worker served by workerd over real TCP, on both stores. The client's per-request period is made
// short here (maxWaitPerRequestMs) so a wait spans several of them in seconds; the service holds
// every waiter to the waitMs each message or request asked for.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HoldfastClient, type Lease, type WaitNotice } from "../../src/client/index";
import { type Stores, startOnBothStores, stopAll, until } from "../support/workerServers";

const KEY = "long-wait-key-1234567";
const PERIOD_MS = 1000;
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;

beforeAll(async () => {
  servers = await startOnBothStores({ API_KEYS: `long=${KEY}` }, { url: inject("upstashUrl"), token: inject("upstashToken") });
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
});

/** A client with a short per-request period whose wait sockets, the messages sent on them, and acquire requests are counted. */
function countedClient(baseUrl: string, waitChannel: "socket" | "http") {
  const seen = { sockets: 0, renews: 0, acquires: 0 };
  class CountedWebSocket extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      seen.sockets += 1;
    }
    override send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
      if (typeof data === "string" && JSON.parse(data).type === "renew") seen.renews += 1;
      super.send(data);
    }
  }
  const client = new HoldfastClient({
    baseUrl,
    apiKey: KEY,
    waitChannel,
    maxWaitPerRequestMs: PERIOD_MS,
    WebSocket: CountedWebSocket,
    fetch: (input, init) => {
      if (new URL(input instanceof Request ? input.url : String(input)).pathname.endsWith("/acquire")) seen.acquires += 1;
      return fetch(input, init);
    },
  });
  return { client, seen };
}

for (const store of ["redis", "durable"] as const) {
  describe(`${store} store`, () => {
    const plain = () => new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY, waitChannel: "http" });
    const waitersAre = (name: string, n: number) =>
      until(
        () => plain().inspect(name),
        (s) => s.waiters === n,
      );

    it("a socket wait spanning several of the service's wait periods keeps its place: FIFO, one socket each, a lease that holds", async () => {
      const name = unique("fifo");
      const holder = await plain().lock(name, { ttlMs: 30_000 });
      const waiters = [0, 1, 2].map(() => countedClient(servers[store].url, "socket"));
      const order: number[] = [];
      const leases: Promise<Lease>[] = [];
      for (const [i, w] of waiters.entries()) {
        // ttlMs shorter than the wait: the lease must still be kept once granted.
        const granted = w.client.lock(name, { ttlMs: 1000, waitMs: 30_000 });
        leases.push(granted);
        granted.then(
          () => order.push(i),
          () => undefined,
        );
        await waitersAre(name, i + 1); // in line in this order
      }
      // Three periods each: without a renewal the service ends a wait after one.
      await until(
        () => Math.min(...waiters.map((w) => w.seen.renews)),
        (n) => n >= 3,
      );
      expect((await plain().inspect(name)).waiters).toBe(3);
      await holder.release();
      for (const [i] of waiters.entries()) {
        const lease = await leases[i];
        expect(order).toEqual([0, 1, 2].slice(0, i + 1));
        expect(await plain().inspect(name)).toMatchObject({ held: true, fence: lease.fence });
        expect(lease.signal.aborted).toBe(false); // after a round trip: a deadline already past would have fired
        await lease.release();
      }
      expect(waiters.map((w) => w.seen.sockets)).toEqual([1, 1, 1]);
    });

    it("an HTTP wait asks again each period until its waitMs is spent, and gets the lock", async () => {
      const name = unique("http");
      const holder = await plain().lock(name, { ttlMs: 30_000 });
      const { client, seen } = countedClient(servers[store].url, "http");
      const waited = client.lock(name, { ttlMs: 2000, waitMs: 30_000 });
      await until(
        () => seen.acquires,
        (n) => n >= 3,
      );
      await holder.release();
      const lease = await waited;
      expect(lease.signal.aborted).toBe(false);
      expect(await plain().inspect(name)).toMatchObject({ held: true, fence: lease.fence });
      await lease.release();
    });

    it("onWait tells once how a busy lock is waited for and who holds it, and nothing when it is free", async () => {
      const name = unique("notice");
      const notices: WaitNotice[] = [];
      const onWait = (n: WaitNotice) => notices.push(n);
      const free = await plain().lock(name, { ttlMs: 30_000, waitMs: 5000, onWait, holder: "report job" });
      expect(notices).toEqual([]);
      const { client } = countedClient(servers[store].url, "socket");
      const waited = client.lock(name, { ttlMs: 5000, waitMs: 10_000, onWait });
      await until(
        () => notices.length,
        (n) => n === 1,
      );
      expect(notices).toEqual([{ channel: "socket", holder: "report job", expiresAt: free.expiresAt }]);
      await free.release();
      await (await waited).release();
      expect(notices).toHaveLength(1);
    });

    it("begin waits for another caller's run of a key past one period and gets its result, telling the wait once", async () => {
      const key = unique("key");
      const first = await plain().begin(key, { ttlMs: 10_000, holder: "first run" });
      if (first.state !== "started") throw new Error("expected to start the key");
      const { client, seen } = countedClient(servers[store].url, "socket");
      const notices: WaitNotice[] = [];
      const waited = client.begin(key, { ttlMs: 10_000, waitMs: 30_000, onWait: (n) => notices.push(n) });
      await until(
        () => seen.sockets,
        (n) => n >= 3,
      ); // each watch is a period at most: the wait goes on past them
      await plain().complete(first.lease, { done: 1 });
      expect(await waited).toMatchObject({ state: "completed", response: { done: 1 } });
      expect(notices).toEqual([{ channel: "socket", holder: "first run", expiresAt: expect.any(Number) }]);
    });
  });
}

it("inspect(name) is the mutex; an unknown kind is a TypeError that says what to pass", async () => {
  const client = new HoldfastClient({ baseUrl: servers.durable.url, apiKey: KEY });
  const name = unique("inspect");
  const lease = await client.lock(name, { ttlMs: 5000 });
  expect(await client.inspect(name)).toMatchObject({ held: true, fence: lease.fence });
  await expect(client.inspect("locks" as "mutex", name)).rejects.toThrow(/no kind "locks"; use one of mutex, rwlock, semaphore, idempotency/);
  await lease.release();
});
