// The lock object with real clients over real TCP, against the Worker served by workerd
// (tools/serve-worker: no dev proxy), on both stores: a waiter whose client disconnects,
// and queued waiters while Redis is paused.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "@upstash/redis";
import { mutexKeys } from "../../src/kinds/mutex/keys";
import { rwLockKeys } from "../../src/kinds/rwlock/keys";
import { semaphoreKeys } from "../../src/kinds/semaphore/keys";
import { PICKUP_MS } from "../../src/limits";
import { startLocalStack, type LocalStack } from "../../tools/local-stack/stack.mjs";
import { httpClient } from "../support/http";
import { type Stores, startOnBothStores, stopAll, until } from "../support/workerServers";

const KEY = "real-clients-key-123456";
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

const client = (base: string) => httpClient(base, KEY);

/** Hangs up every disconnectingAcquire still open now. */
const hangUps = new Set<() => void>();
function hangUpAll(): void {
  for (const hangUp of [...hangUps]) hangUp();
}

/** A real client that sends an acquire over its own connection and hangs up after `closeAfterMs` (or at hangUpAll), unanswered. */
function disconnectingAcquire(base: string, name: string, body: unknown, closeAfterMs: number, path = `/v1/locks/${name}/acquire`): Promise<void> {
  const { port } = new URL(base);
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), "127.0.0.1", () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEY}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
      );
    });
    const hangUp = () => {
      hangUps.delete(hangUp);
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(hangUp, closeAfterMs);
    hangUps.add(hangUp);
    socket.on("error", () => hangUp());
  });
}

let stack: LocalStack;
let servers: Stores;

beforeAll(async () => {
  stack = await startLocalStack(); // its own redis: this file pauses it
  const vars = { API_KEYS: `real=${KEY}`, WEBHOOK_SECRET: "real-clients-secret", ONEXPIRE_HOSTS: "*=127.0.0.1", ONEXPIRE_ALLOW_HTTP_LOCALHOST: "1" };
  servers = await startOnBothStores(vars, stack);
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
  await stack?.stop();
});

for (const kind of ["redis", "durable"] as const) {
  describe(`${kind} store, real clients`, () => {
    it(`a waiter whose client hangs up holds the lock at most the pickup time (${PICKUP_MS} ms); the next live waiter gets it right after`, async () => {
      const { post, get } = client(servers[kind].url);
      const name = unique("hangup");
      const holder = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
      // Like `curl -m1 ... acquire {"ttlMs":8000,"waitMs":20000}`: asks to wait, gives up after a second.
      const gone = disconnectingAcquire(servers[kind].url, name, { ttlMs: 8000, waitMs: 20_000 }, 1000);
      await until(
        () => get(`/v1/locks/${name}`),
        (r) => r.body.waiters === 1,
      );
      const live = post(`/v1/locks/${name}/acquire`, { ttlMs: 8000, waitMs: 20_000 });
      await until(
        () => get(`/v1/locks/${name}`),
        (r) => r.body.waiters === 2,
      );
      await gone; // the first waiter's client is gone; workerd does not tell the Worker

      const releasedAt = Date.now();
      expect((await post(`/v1/locks/${name}/release`, { token: holder.token })).status).toBe(200);
      const res = await live;
      const waited = Date.now() - releasedAt;
      expect(res.status).toBe(200);
      // Handed to the vanished waiter first, taken back after the pickup time, not after its 8 s ttl.
      expect(waited).toBeLessThan(PICKUP_MS + 1500);
      expect((await get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, fence: res.body.fence, waiters: 0 });
    });

    it("30 waiters whose clients hung up ahead of a live one: each grant that cannot be written goes back at once, not after the pickup time", async () => {
      const { post, get } = client(servers[kind].url);
      const name = unique("crowd");
      const holder = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
      const crowd = 30;
      const gone: Array<Promise<void>> = [];
      for (let i = 0; i < crowd; i++) gone.push(disconnectingAcquire(servers[kind].url, name, { ttlMs: 8000, waitMs: 20_000 }, 60_000));
      await until(
        () => get(`/v1/locks/${name}`),
        (r) => r.body.waiters === crowd,
      );
      const live = post(`/v1/locks/${name}/acquire`, { ttlMs: 8000, waitMs: 20_000 });
      await until(
        () => get(`/v1/locks/${name}`),
        (r) => r.body.waiters === crowd + 1,
      );
      hangUpAll();
      await Promise.all(gone);
      const releasedAt = Date.now();
      await post(`/v1/locks/${name}/release`, { token: holder.token });
      const res = await live;
      expect(res.status).toBe(200);
      // Taken back one by one after the pickup time, the crowd would stand the lock still 30 x 2 s.
      expect(Date.now() - releasedAt).toBeLessThan(2 * PICKUP_MS);
      expect((await get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, fence: res.body.fence, waiters: 0 });
    }, 60_000);

    if (kind === "redis") {
      it("a wait ends by its waitMs counted from the request's arrival: the time a slow store took before the line counts", async () => {
        const { post } = client(servers.redis.url);
        const name = unique("deadline");
        const holder = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
        // The store answers the waiter's first try (busy) only after 800 ms; its waitMs is 1500.
        stack.redis.pause();
        const started = Date.now();
        const waiting = post(`/v1/locks/${name}/acquire`, { ttlMs: 5000, waitMs: 1500 });
        await new Promise((r) => setTimeout(r, 800));
        stack.redis.resume();
        // Released after the waiter's deadline, before 800 + 1500 ms: a grant now would come too late.
        await new Promise((r) => setTimeout(r, Math.max(0, started + 1900 - Date.now())));
        const released = post(`/v1/locks/${name}/release`, { token: holder.token });
        const res = await waiting;
        expect((await released).status).toBe(200);
        expect(res.status).toBe(409);
        expect(res.body.error).toBe("locked");
      });

      it("queued waiters get 503 store_unavailable when the store stops answering, not 409 locked", async () => {
        const { post, get } = client(servers.redis.url);
        const name = unique("outage");
        await post(`/v1/locks/${name}/acquire`, { ttlMs: 1000 });
        const waiting = post(`/v1/locks/${name}/acquire`, { ttlMs: 5000, waitMs: 6000 });
        await until(
          () => get(`/v1/locks/${name}`),
          (r) => r.body.waiters === 1,
        );
        stack.redis.pause();
        try {
          const res = await waiting;
          expect(res.status).toBe(503);
          expect(res.body.error).toBe("store_unavailable");
        } finally {
          stack.redis.resume();
        }
        // Once the store answers again, waiting works again.
        const again = await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000, waitMs: 10_000 });
        expect(again.status).toBe(200);
      });

      // A fresh waiter's grant needs no pickup, but when the answer of that store step is lost (Redis
      // paused past the store deadline) the object asks again, and then the waiter has waited: the
      // grant it is answered must be marked for pickup, or a vanished client holds it for its ttlMs.
      const lostStep = [
        {
          lock: "mutex",
          acquire: (n: string) => `/v1/locks/${n}/acquire`,
          inspect: (n: string) => `/v1/locks/${n}`,
          held: (b: any) => b.held,
          // The mutex keeps its last fence in its hash (lua/FIELDS.md).
          fenceOf: (redis: Redis, n: string) => redis.hget<string>(mutexKeys.lock({ ns: "real", name: n }), "fence"),
          body: {},
        },
        {
          lock: "rwlock",
          acquire: (n: string) => `/v1/rwlocks/${n}/write/acquire`,
          inspect: (n: string) => `/v1/rwlocks/${n}`,
          held: (b: any) => b.mode !== "free",
          fenceOf: (redis: Redis, n: string) => redis.get<string>(rwLockKeys({ ns: "real", name: n }).fence),
          body: {},
        },
        {
          lock: "semaphore",
          acquire: (n: string) => `/v1/semaphores/${n}/acquire`,
          inspect: (n: string) => `/v1/semaphores/${n}`,
          held: (b: any) => b.used > 0,
          fenceOf: (redis: Redis, n: string) => redis.get<string>(semaphoreKeys({ ns: "real", name: n }).fence),
          body: { limit: 1 },
        },
      ] as const;
      for (const c of lostStep) {
        it(`${c.lock}: a grant whose store step answered too late is asked again and, never picked up, taken back (never kept for its ttl)`, async () => {
          const { get, post } = client(servers.redis.url);
          const name = unique(`lost-step-${c.lock}`);
          const body = { ...c.body, ttlMs: 30_000, waitMs: 20_000, onExpire: "http://127.0.0.1:9/unused" };
          // Loads the step's script into Redis first: else the first try is an EVALSHA that finds no
          // script and changes nothing, and its EVAL comes only after the deadline.
          expect((await post(c.acquire(unique("warm-up")), { ...body, ttlMs: 1000 })).status).toBe(200);
          stack.redis.pause();
          let resumedAt: number;
          try {
            // onExpire sends a free lock's acquire through the line as its fresh head; its client hangs up unanswered.
            void disconnectingAcquire(servers.redis.url, name, body, 1000, c.acquire(name));
            // Past the store deadline: the first step (made before the waiter had waited) is an unknown outcome.
            await new Promise((r) => setTimeout(r, 2600));
          } finally {
            stack.redis.resume();
            resumedAt = Date.now();
          }
          // Redis now runs the queued steps: the first grants (a fence is issued), the next answers that
          // grant again. Its client is gone, so the grant is taken back: at once when its answer cannot be
          // written, else after the pickup time; never after its 30 s ttl.
          const redis = new Redis({ url: stack.url, token: stack.token });
          const fence = await until(
            () => c.fenceOf(redis, name),
            (f) => f !== null,
          );
          expect(fence).not.toBeNull();
          const freed = await until(
            () => get(c.inspect(name)),
            (r) => !c.held(r.body),
            PICKUP_MS + 5000,
          );
          expect(c.held(freed.body)).toBe(false); // not after its 30 s ttl
          expect(Date.now() - resumedAt).toBeLessThan(PICKUP_MS + 5000);
        });
      }
    }
  });
}
