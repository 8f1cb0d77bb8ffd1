// Wait sockets against the Worker served by workerd over real TCP (no dev proxy), on both
// stores: a waiter that goes away leaves the line at once, a grant counts once acknowledged,
// and socket and HTTP waiters share one fair line.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HoldfastClient, LockedError } from "../../../src/client/index";
import { PICKUP_MS } from "../../../src/limits";
import { openSocket, rawHandshake, socketWaiter, takeGrant } from "../../support/waitSocket";
import { httpClient } from "../../support/http";
import { type Stores, startOnBothStores, stopAll, until } from "../../support/workerServers";

const KEY = "socket-test-key-123456";
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;

beforeAll(async () => {
  servers = await startOnBothStores({ API_KEYS: `sockets=${KEY}` }, { url: inject("upstashUrl"), token: inject("upstashToken") });
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
});

const http = (base: string) => httpClient(base, KEY);

for (const store of ["redis", "durable"] as const) {
  describe(`${store} store`, () => {
    const base = () => servers[store].url;
    const api = () => http(base());
    /**
     * A holder, two socket waiters in line behind it, and the holder's release: the first is offered the lock.
     * `releasedAt` is taken before the release is sent, so before the offer and its pickup timer: a time
     * measured from it is never shorter than the same time measured from the offer.
     */
    const twoSocketWaitersHandedTheLock = async (name: string) => {
      const holder = (await api().post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
      const first = await socketWaiter(base(), `/v1/locks/${name}/wait`, KEY, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      const second = await socketWaiter(base(), `/v1/locks/${name}/wait`, KEY, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 2);
      const releasedAt = Date.now();
      await api().post(`/v1/locks/${name}/release`, { token: holder.token });
      return { first, second, releasedAt };
    };
    const waitersAre = (path: string, n: number) =>
      until(
        () => api().get(path),
        (r) => r.body.waiters === n,
      ).then((r) => expect(r.body.waiters).toBe(n));

    it("a socket waiter is handed the lock on release, acknowledges it, and still holds it after its socket closes", async () => {
      const name = unique("handoff");
      const holder = (await api().post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
      const waiter = await socketWaiter(base(), `/v1/locks/${name}/wait`, KEY, { ttlMs: 10_000, waitMs: 10_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      expect((await api().post(`/v1/locks/${name}/release`, { token: holder.token })).status).toBe(200);
      const grant = await takeGrant(waiter);
      expect(grant.fence).toBeGreaterThan(holder.fence);
      expect(await waiter.closed).toBe(1000);
      // Closing after `held` releases nothing: the lease ends by release or TTL.
      expect((await api().get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, fence: grant.fence, waiters: 0 });
      expect((await api().post(`/v1/locks/${name}/heartbeat`, { token: grant.token })).status).toBe(200);
      expect((await api().post(`/v1/locks/${name}/release`, { token: grant.token })).status).toBe(200);
    });

    it("a holder that keeps its socket heartbeats and releases over it, and its release hands the lock to the next waiter", async () => {
      const name = unique("keep");
      const path = `/v1/locks/${name}`;
      const holder = await socketWaiter(base(), `${path}/wait`, KEY, { ttlMs: 2000, waitMs: 10_000, keep: true });
      const grant = await takeGrant(holder);
      holder.ws.send(JSON.stringify({ type: "heartbeat", ttlMs: 5000 }));
      expect(await holder.next()).toMatchObject({ type: "heartbeat", ttlMs: 5000, fence: grant.fence });
      expect((await api().get(path)).body).toMatchObject({ held: true, fence: grant.fence });
      const next = await socketWaiter(base(), `${path}/wait`, KEY, { ttlMs: 2000, waitMs: 10_000 });
      await waitersAre(path, 1);
      holder.ws.send(JSON.stringify({ type: "release" }));
      expect(await holder.next()).toEqual({ type: "released", released: true, count: 0 });
      expect(await holder.closed).toBe(1000);
      const handed = await takeGrant(next);
      expect(handed.fence).toBeGreaterThan(grant.fence);
      expect((await api().post(`${path}/heartbeat`, { token: grant.token })).body.error).toBe("lease_lost");
      // A semaphore holder too: its release frees its permits for the waiter behind it.
      const sem = `/v1/semaphores/${name}`;
      const a = await socketWaiter(base(), `${sem}/wait`, KEY, { limit: 1, ttlMs: 5000, waitMs: 10_000, keep: true });
      await takeGrant(a);
      const b = await socketWaiter(base(), `${sem}/wait`, KEY, { limit: 1, ttlMs: 5000, waitMs: 10_000 });
      await waitersAre(sem, 1);
      a.ws.send(JSON.stringify({ type: "release" }));
      expect(await a.next()).toMatchObject({ type: "released", permits: 1 });
      expect((await takeGrant(b)).permits).toBe(1);
    });

    it("a socket that closes while waiting leaves the line at once: the live waiter behind it is granted right after the release", async () => {
      const name = unique("leaves");
      const holder = (await api().post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
      const gone = await socketWaiter(base(), `/v1/locks/${name}/wait`, KEY, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      const live = api().post(`/v1/locks/${name}/acquire`, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 2);
      gone.ws.close(4000, "going");
      await waitersAre(`/v1/locks/${name}`, 1);
      // The service answers the client's Close, so the client's close completes (it does not hang in CLOSING).
      const closing = new Promise((r) => setTimeout(() => r("still closing after 5 s: the service never answered the Close"), 5000));
      expect(await Promise.race([gone.closed, closing])).toBe(1000);
      const releasedAt = Date.now();
      await api().post(`/v1/locks/${name}/release`, { token: holder.token });
      const granted = await live;
      expect(granted.status).toBe(200);
      // Nothing was granted to the socket that left: no pickup time was waited out.
      expect(Date.now() - releasedAt).toBeLessThan(PICKUP_MS / 2);
    });

    it("a waiter whose TCP connection is reset (a crashed client) leaves the line; the key may come as a header", async () => {
      const name = unique("reset");
      const holder = (await api().post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
      const raw = rawHandshake(base(), `/v1/locks/${name}/wait`, { Authorization: `Bearer ${KEY}` });
      expect((await raw.status).status).toBe(101);
      raw.sendText(JSON.stringify({ type: "acquire", ttlMs: 10_000, waitMs: 20_000 }));
      await waitersAre(`/v1/locks/${name}`, 1);
      raw.reset();
      await waitersAre(`/v1/locks/${name}`, 0);
      expect((await api().post(`/v1/locks/${name}/release`, { token: holder.token })).body.released).toBe(true);
      expect((await api().get(`/v1/locks/${name}`)).body.held).toBe(false);
    });

    it("a grant offered and never acknowledged goes back to the line at once: the next waiter gets the lock, the first token is lost", async () => {
      const name = unique("unacked");
      const { first, second, releasedAt } = await twoSocketWaitersHandedTheLock(name);
      const offered = await first.next();
      expect(offered.type).toBe("granted");
      first.ws.close(); // gone before its ack
      const grant = await takeGrant(second);
      // Handed on at the close: waited out, the pickup time alone (from the offer, after releasedAt) is PICKUP_MS.
      expect(Date.now() - releasedAt).toBeLessThan(PICKUP_MS / 2);
      expect(grant.fence).toBeGreaterThan(offered.grant.fence);
      const late = await api().post(`/v1/locks/${name}/heartbeat`, { token: offered.grant.token });
      expect(late).toMatchObject({ status: 409, body: { error: "lease_lost" } });
    });

    it("an ack naming another token is refused, and the grant it was offered goes back to the line at once", async () => {
      const name = unique("bad-ack");
      const { first, second, releasedAt } = await twoSocketWaitersHandedTheLock(name);
      expect((await first.next()).type).toBe("granted");
      first.ws.send(JSON.stringify({ type: "ack", token: "hf_not-the-offered-one" }));
      expect(await first.next()).toMatchObject({ type: "error", status: 400, error: "invalid_token" });
      await takeGrant(second);
      // Handed on at the refusal: waited out, the pickup time alone (from the offer, after releasedAt) is PICKUP_MS.
      expect(Date.now() - releasedAt).toBeLessThan(PICKUP_MS / 2);
    });

    it("an acknowledgement that comes after the pickup time is refused: lease_lost, and the lock is free", async () => {
      const name = unique("late-ack");
      const holder = (await api().post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
      const slow = await socketWaiter(base(), `/v1/locks/${name}/wait`, KEY, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      await api().post(`/v1/locks/${name}/release`, { token: holder.token });
      const offered = await slow.next();
      expect(offered.type).toBe("granted");
      await until(
        () => api().get(`/v1/locks/${name}`),
        (r) => r.body.held === false,
      );
      slow.ws.send(JSON.stringify({ type: "ack", token: offered.grant.token }));
      expect(await slow.next()).toMatchObject({ type: "error", status: 409, error: "lease_lost" });
    });

    it("socket and HTTP waiters share one first-come-first-served line", async () => {
      const name = unique("fifo");
      const path = `/v1/locks/${name}`;
      let held = (await api().post(`${path}/acquire`, { ttlMs: 30_000 })).body;
      const order: string[] = [];
      const waiters: Array<{ label: string; granted: Promise<any> }> = [];
      for (const [i, channel] of ["socket", "http", "socket", "http"].entries()) {
        const label = `${channel}-${i}`;
        const granted =
          channel === "socket"
            ? socketWaiter(base(), `${path}/wait`, KEY, { ttlMs: 10_000, waitMs: 20_000 }).then(takeGrant)
            : api()
                .post(`${path}/acquire`, { ttlMs: 10_000, waitMs: 20_000 })
                .then((r) => r.body);
        waiters.push({
          label,
          granted: granted.then((g) => {
            order.push(label);
            return g;
          }),
        });
        await waitersAre(path, i + 1);
      }
      for (const w of waiters) {
        await api().post(`${path}/release`, { token: held.token });
        held = await w.granted;
      }
      await api().post(`${path}/release`, { token: held.token });
      expect(order).toEqual(waiters.map((w) => w.label));
    });

    it("read-write lock: readers on sockets and HTTP are admitted together, and none passes a queued writer", async () => {
      const name = unique("rw");
      const path = `/v1/rwlocks/${name}`;
      const writer = (await api().post(`${path}/write/acquire`, { ttlMs: 30_000 })).body;
      const r1 = socketWaiter(base(), `${path}/read/wait`, KEY, { ttlMs: 10_000, waitMs: 20_000 }).then(takeGrant);
      await waitersAre(path, 1);
      const r2 = api().post(`${path}/read/acquire`, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(path, 2);
      let w2Granted = false;
      const w2 = socketWaiter(base(), `${path}/write/wait`, KEY, { ttlMs: 10_000, waitMs: 20_000 })
        .then(takeGrant)
        .then((g) => {
          w2Granted = true;
          return g;
        });
      await waitersAre(path, 3);
      const r3 = api().post(`${path}/read/acquire`, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(path, 4);
      await api().post(`${path}/release`, { token: writer.token });
      const [a, b] = await Promise.all([r1, r2]);
      expect(b.status).toBe(200);
      // The two readers hold together; the writer behind them and the reader behind it wait.
      const state = (await api().get(path)).body;
      expect(state).toMatchObject({ mode: "read", readers: 2, waiters: 2 });
      expect(w2Granted).toBe(false);
      await api().post(`${path}/release`, { token: a.token });
      await api().post(`${path}/release`, { token: b.body.token });
      const w = await w2;
      expect((await api().get(path)).body).toMatchObject({ mode: "write", waiters: 1 });
      await api().post(`${path}/release`, { token: w.token });
      expect((await r3).status).toBe(200);
    });

    it("semaphore: a socket waiter for 2 permits is not overtaken by an HTTP waiter for 1", async () => {
      const name = unique("sem");
      const path = `/v1/semaphores/${name}`;
      const one = (await api().post(`${path}/acquire`, { limit: 3, permits: 1, ttlMs: 30_000 })).body;
      const two = (await api().post(`${path}/acquire`, { limit: 3, permits: 2, ttlMs: 30_000 })).body;
      const big = socketWaiter(base(), `${path}/wait`, KEY, { limit: 3, permits: 2, ttlMs: 10_000, waitMs: 20_000 }).then(takeGrant);
      await waitersAre(path, 1);
      const small = api().post(`${path}/acquire`, { limit: 3, permits: 1, ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(path, 2);
      await api().post(`${path}/release`, { token: one.token });
      // One permit is free, but the head needs two: the waiter for one stays behind it.
      expect((await api().get(path)).body).toMatchObject({ used: 2, waiters: 2 });
      await api().post(`${path}/release`, { token: two.token });
      const [b, s] = await Promise.all([big, small]);
      expect(b.permits).toBe(2);
      expect(s.status).toBe(200);
      expect((await api().get(path)).body).toMatchObject({ used: 3, waiters: 0 });
    });

    it("bad input is answered on the socket with the HTTP error and changes nothing; a bad handshake is refused before any socket", async () => {
      const name = unique("bad");
      const path = `/v1/locks/${name}`;
      const cases: Array<[unknown, string]> = [
        [{ type: "acquire", ttlMs: 1000, waitMs: 0 }, "invalid_wait"],
        [{ type: "acquire", ttlMs: 1000, waitMs: 1000, token: "t-123" }, "invalid_token"],
        [{ type: "acquire", ttlMs: 5, waitMs: 1000 }, "invalid_ttl"],
        [{ type: "acquire", ttlMs: 1000, waitMs: 1000, extra: 1 }, "invalid_body"],
        // The HTTP acquire's own check (in the kind's service), on the socket too: no notifications into a private network.
        [{ type: "acquire", ttlMs: 1000, waitMs: 1000, onExpire: "http://127.0.0.1:9/hook" }, "invalid_on_expire"],
        [{ type: "ack", token: "x" }, "invalid_body"],
        ["not json", "invalid_body"],
      ];
      for (const [message, code] of cases) {
        const s = openSocket(base(), `${path}/wait`, KEY);
        await s.opened;
        s.ws.send(typeof message === "string" ? message : JSON.stringify(message));
        expect(await s.next()).toMatchObject({ type: "error", status: 400, error: code });
        expect(await s.closed).toBe(1000);
      }
      expect((await api().get(path)).body).toMatchObject({ held: false, waiters: 0 });
      expect((await rawHandshake(base(), `${path}/wait`, {}).status).status).toBe(401);
      expect((await rawHandshake(base(), `${path}/wait`, { Authorization: "Bearer wrong-key-123" }).status).status).toBe(401);
      expect((await rawHandshake(base(), `/v1/locks/${"x".repeat(201)}/wait`, { Authorization: `Bearer ${KEY}` }).status).status).toBe(400);
      const plain = await fetch(`${base()}${path}/wait`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(plain.status).toBe(426);
      expect(await plain.json()).toMatchObject({ error: "upgrade_required" });
    });

    it("a wait that runs out is answered timeout with retryAfterMs, and leaves nothing in line", async () => {
      const name = unique("timeout");
      const holder = (await api().post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
      const s = await socketWaiter(base(), `/v1/locks/${name}/wait`, KEY, { ttlMs: 1000, waitMs: 300 });
      const answer = await s.next();
      expect(answer.type).toBe("timeout");
      expect(answer.retryAfterMs).toBeGreaterThan(0);
      expect((await api().get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, fence: holder.fence, waiters: 0 });
    });

    it("an idempotency key's wait socket gets the stored result pushed when the running caller completes, and `free` when it fails", async () => {
      const key = unique("once");
      const path = `/v1/idempotency/${key}`;
      const first = (await api().post(`${path}/begin`, { ttlMs: 30_000 })).body;
      expect(first.state).toBe("started");
      // Another caller is turned away (in_progress), then waits on the socket for the run's end.
      expect((await api().post(`${path}/begin`, { ttlMs: 30_000 })).status).toBe(409);
      const waiting = openSocket(base(), `${path}/wait`, KEY);
      await waiting.opened;
      waiting.ws.send(JSON.stringify({ type: "watch", waitMs: 10_000 }));
      expect((await api().get(path)).body.state).toBe("started");
      const completedAt = Date.now();
      await api().post(`${path}/complete`, { token: first.token, response: { invoice: 42 } });
      expect(await waiting.next()).toMatchObject({ type: "completed", response: { invoice: 42 }, fence: first.fence });
      // Pushed: unpushed, the waiter would look again only when its 10 s wait or the 30 s lease ends.
      expect(Date.now() - completedAt).toBeLessThan(5000);

      const key2 = unique("once-failed");
      const path2 = `/v1/idempotency/${key2}`;
      const run = (await api().post(`${path2}/begin`, { ttlMs: 30_000 })).body;
      const second = openSocket(base(), `${path2}/wait`, KEY);
      await second.opened;
      second.ws.send(JSON.stringify({ type: "watch", waitMs: 10_000 }));
      expect((await api().get(path2)).body.state).toBe("started");
      const failedAt = Date.now();
      await api().post(`${path2}/fail`, { token: run.token });
      expect(await second.next()).toEqual({ type: "free" });
      expect(Date.now() - failedAt).toBeLessThan(5000);
      const third = openSocket(base(), `${path2}/wait`, KEY);
      await third.opened;
      third.ws.send(JSON.stringify({ type: "watch", waitMs: 0 }));
      expect(await third.next()).toMatchObject({ type: "error", status: 400, error: "invalid_wait" });
    });

    it("runOnce: a second caller of a key in progress gets the first caller's result pushed, with one begin", async () => {
      const key = unique("run-once");
      const begins: number[] = [0, 0];
      const client = (i: number) =>
        new HoldfastClient({
          baseUrl: base(),
          apiKey: KEY,
          fetch: (input, init) => {
            if (String(input).endsWith("/begin")) begins[i] += 1;
            return fetch(input, init);
          },
        });
      let release!: () => void;
      const working = new Promise<void>((r) => (release = r));
      const firstRun = client(0).runOnce(
        key,
        async () => {
          await working;
          return { sent: 1 };
        },
        { ttlMs: 30_000 },
      );
      await until(
        () => api().get(`/v1/idempotency/${key}`),
        (r) => r.body.state === "started",
      );
      const secondRun = client(1).runOnce(key, async () => ({ sent: 2 }), { ttlMs: 30_000, waitMs: 20_000 });
      await until(
        () => begins[1],
        (n) => n === 1,
      );
      release();
      expect(await firstRun).toEqual({ sent: 1 });
      expect(await secondRun).toEqual({ sent: 1 });
      expect(begins[1]).toBe(1); // no polling: the result came over the socket
    });

    it("the client SDK waits over a socket where it can (auto), and over HTTP when told or when sockets do not open", async () => {
      let sockets = 0;
      class CountingWebSocket extends WebSocket {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols);
          sockets += 1;
        }
      }
      /** A test fake standing in for a proxy that refuses upgrades: the socket never opens. */
      class RefusedWebSocket extends WebSocket {
        constructor(_url: string | URL, protocols?: string | string[]) {
          super("ws://127.0.0.1:9/", protocols);
        }
      }
      const name = unique("sdk");
      const client = (options: Partial<ConstructorParameters<typeof HoldfastClient>[0]>) =>
        new HoldfastClient({ baseUrl: base(), apiKey: KEY, ...options });
      const holder = await client({}).lock(name, { ttlMs: 30_000 });
      expect(sockets).toBe(0); // a try is one HTTP request
      const bySocket = client({ WebSocket: CountingWebSocket }).lock(name, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      expect(sockets).toBe(1);
      await holder.release();
      const a = await bySocket;
      const byHttp = client({ WebSocket: CountingWebSocket, waitChannel: "http" }).lock(name, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      expect(sockets).toBe(1);
      await a.release();
      const b = await byHttp;
      const fallback = client({ WebSocket: RefusedWebSocket }).lock(name, { ttlMs: 10_000, waitMs: 20_000 });
      await waitersAre(`/v1/locks/${name}`, 1);
      await b.release();
      const c = await fallback;
      expect(c.fence).toBeGreaterThan(b.fence);
      await expect(client({ WebSocket: CountingWebSocket }).lock(name, { ttlMs: 1000, waitMs: 200 })).rejects.toBeInstanceOf(LockedError);
      await c.release();
    });
  });
}
