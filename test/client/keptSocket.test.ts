// holdfast/client holding over the wait socket it was granted on (docs/API.md, "Keeping the socket as
// the holder"): the Worker served by workerd over real TCP, on both stores, the client's real WebSocket.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HoldfastClient, LockedError } from "../../src/client/index";
import { type Stores, startOnBothStores, stopAll, until } from "../support/workerServers";

const KEY = "kept-socket-key-123456";
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;

beforeAll(async () => {
  servers = await startOnBothStores({ API_KEYS: `kept=${KEY}` }, { url: inject("upstashUrl"), token: inject("upstashToken") });
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
});

/** A client whose HTTP requests (by path), WebSockets and the frames it sends on them (by type) are recorded. */
function recordedClient(baseUrl: string) {
  const requests: string[] = [];
  const sockets: WebSocket[] = [];
  const frames: string[] = [];
  class RecordedWebSocket extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      sockets.push(this);
    }
    override send(data: Parameters<WebSocket["send"]>[0]): void {
      frames.push(JSON.parse(String(data)).type);
      super.send(data);
    }
  }
  const client = new HoldfastClient({
    baseUrl,
    apiKey: KEY,
    WebSocket: RecordedWebSocket,
    fetch: (input, init) => {
      requests.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
      return fetch(input, init);
    },
  });
  return { client, requests, sockets, frames };
}

for (const store of ["redis", "durable"] as const) {
  describe(`${store} store`, () => {
    const base = () => servers[store].url;
    const plain = () => new HoldfastClient({ baseUrl: base(), apiKey: KEY, waitChannel: "http" });
    const waitersAre = (path: string, n: number) =>
      until(
        () => plain().inspect(path.startsWith("/v1/semaphores") ? "semaphore" : "mutex", path.split("/").pop() as string),
        (s) => s.waiters === n,
      );

    it("a lease granted over a wait socket heartbeats and releases over it, with no HTTP request, and its release hands the lock on", async () => {
      const name = unique("kept");
      const holder = await plain().lock(name, { ttlMs: 30_000 });
      const b = recordedClient(base());
      const waiting = b.client.lock(name, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      await holder.release();
      const lease = await waiting;
      expect(lease.channel).toBe("socket");
      const before = (await plain().inspect("mutex", name)).expiresAt as number;
      // Time passes before the heartbeat, so the lease it extends ends visibly later than the grant's
      // (a heartbeat that never reached the service would leave the service's expiry where it was).
      const gapMs = 300;
      await new Promise((r) => setTimeout(r, gapMs));
      const { expiresAt } = await lease.heartbeat();
      expect(b.frames.filter((t) => t === "heartbeat")).toHaveLength(1);
      const served = (await plain().inspect("mutex", name)).expiresAt as number;
      expect(served).toBe(expiresAt);
      expect(served - before).toBeGreaterThanOrEqual(gapMs - 50);
      // The next waiter, also on a socket: B's release over its socket hands the lock straight to it.
      const c = recordedClient(base());
      const next = c.client.lock(name, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      await lease.release();
      const nextLease = await next;
      expect(nextLease.fence).toBeGreaterThan(lease.fence);
      expect(b.requests).toEqual([]); // the wait, the heartbeat and the release: all on the socket
      await nextLease.release();
      expect(c.requests).toEqual([]);
      expect((await plain().inspect("mutex", name)).held).toBe(false);
    });

    it("a heartbeat and the release sent back to back on the kept socket are answered in turn: extended, then released there", async () => {
      const name = unique("turns");
      const holder = await plain().lock(name, { ttlMs: 30_000 });
      const b = recordedClient(base());
      const waiting = b.client.lock(name, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      await holder.release();
      const lease = await waiting;
      const before = lease.expiresAt;
      // The release is sent while the heartbeat's answer is still on its way: it waits for it, and each gets its own.
      const [beat] = await Promise.all([lease.heartbeat(), lease.release()]);
      // The heartbeat went out on the socket before the release, and the service extended the lease
      // (its expiry is taken later than the grant's, at least a round trip later).
      expect(b.frames.slice(-2)).toEqual(["heartbeat", "release"]);
      expect(beat.expiresAt).toBeGreaterThan(before);
      expect(b.requests).toEqual([]); // neither fell back to HTTP
      expect((await plain().inspect("mutex", name)).held).toBe(false);
    });

    it("a kept socket that breaks mid-hold costs nothing: the lease goes on over HTTP, not lost, and is released there", async () => {
      const name = unique("broken");
      const holder = await plain().lock(name, { ttlMs: 30_000 });
      const b = recordedClient(base());
      const waiting = b.client.lock(name, { ttlMs: 3000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      await holder.release();
      const lease = await waiting;
      expect(lease.channel).toBe("socket");
      const grantedUntil = lease.expiresAt;
      b.sockets[0].close(); // the connection goes away mid-hold
      await until(
        () => lease.channel,
        (channel) => channel === "http",
      );
      // Past the TTL (the point of this case is that time passes): the lease the grant gave would have
      // ended by now, so a lease still held was kept by the heartbeats that went over HTTP.
      await new Promise((r) => setTimeout(r, grantedUntil + 1000 - Date.now()));
      expect(lease.signal.aborted).toBe(false);
      const served = await plain().inspect("mutex", name);
      expect(served).toMatchObject({ held: true, fence: lease.fence });
      expect(served.expiresAt as number).toBeGreaterThan(Date.now());
      // Held by the service, not only in this client's view: another caller's try is refused.
      await expect(plain().lock(name, { ttlMs: 3000 })).rejects.toBeInstanceOf(LockedError);
      expect(b.requests.filter((p) => p.endsWith("/heartbeat")).length).toBeGreaterThanOrEqual(1);
      await lease.release();
      expect(b.requests.at(-1)).toBe(`/v1/locks/${name}/release`);
      expect((await plain().inspect("mutex", name)).held).toBe(false);
    });

    it("a semaphore permit granted over a wait socket is released over it", async () => {
      const name = unique("sem");
      const first = await plain().semaphore(name, { ttlMs: 30_000, limit: 1 });
      const b = recordedClient(base());
      const waiting = b.client.semaphore(name, { ttlMs: 10_000, waitMs: 20_000, limit: 1 });
      await waitersAre(`/v1/semaphores/${name}`, 1);
      await first.release();
      const lease = await waiting;
      expect(lease.channel).toBe("socket");
      await lease.release();
      expect(b.requests).toEqual([]);
      expect(await plain().inspect("semaphore", name)).toMatchObject({ used: 0 });
    });
  });
}
