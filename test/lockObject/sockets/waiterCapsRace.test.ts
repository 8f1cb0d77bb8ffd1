// The caps on waiting hold when everyone comes at once (issue 44), against the Worker served by
// workerd over real TCP on both stores: 1,000 wait socket handshakes and 300 HTTP waits sent
// together at a lock with room for 50 admit exactly 50, and 500 handshakes over ten locks of a
// namespace with room for 120 sockets open exactly 120. (Each handshake's room is reserved before
// anything is awaited, and a lock object's count reaches its namespace object in order.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpClient } from "../../support/http";
import { openSocket, type TestSocket } from "../../support/waitSocket";
import { type Stores, startForKeys, stopAll, until } from "../../support/workerServers";

const KEYS = { crowd: "caps-race-crowd-key-1", spread: "caps-race-spread-key-1" };
const WAITERS_CAP = 50;
const SOCKETS_CAP = 120;
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;

beforeAll(async () => {
  // The caps race alone: each key's rate of new sockets (20 at once by default: socketRate.test.ts) would refuse
  // most of these handshakes before any cap was met, so its burst here is above every crowd of the file. And the
  // race is the caps', not the store's deadline: 1,300 requests at once on a busy runner passed the 2 s default.
  servers = await startForKeys(KEYS, {
    STORE_TIMEOUT_MS: "10000",
    MAX_WAITERS_PER_LOCK: String(WAITERS_CAP),
    MAX_SOCKETS_PER_NAMESPACE: String(SOCKETS_CAP),
    SOCKET_OPEN_BURST: "10000",
  });
}, 180_000);

afterAll(async () => {
  await stopAll(servers ?? {});
});

/** A socket's handshake settled: opened (admitted) or refused (the socket failed before it opened). */
function settled(s: TestSocket): Promise<boolean> {
  return s.opened.then(
    () => true,
    () => false,
  );
}

for (const store of ["redis", "durable"] as const) {
  describe(`${store} store`, () => {
    const base = () => servers[store].url;

    it(`1,000 socket handshakes and 300 HTTP waits sent together at a lock with room for ${WAITERS_CAP}: exactly ${WAITERS_CAP} are let in`, async () => {
      const api = httpClient(base(), KEYS.crowd);
      const path = `/v1/locks/${unique("crowd")}`;
      const holder = await api.post(`${path}/acquire`, { ttlMs: 120_000 });
      expect(holder.status).toBe(200);
      const sockets: TestSocket[] = [];
      const leave = new AbortController();
      const httpAnswers: Promise<{ status: number; body: any } | undefined>[] = [];
      // Interleaved: three handshakes, then an HTTP wait, and so on, all before anything is answered.
      for (let i = 0; i < 1000; i++) {
        const s = openSocket(base(), `${path}/wait`, KEYS.crowd);
        void s.opened.then(
          () => s.ws.send(JSON.stringify({ type: "acquire", ttlMs: 30_000, waitMs: 60_000 })),
          () => {},
        );
        sockets.push(s);
        if (i % 3 === 2 && httpAnswers.length < 300) {
          httpAnswers.push(
            fetch(`${base()}${path}/acquire`, {
              method: "POST",
              headers: { authorization: `Bearer ${KEYS.crowd}`, "content-type": "application/json" },
              body: JSON.stringify({ ttlMs: 30_000, waitMs: 60_000 }),
              signal: leave.signal,
            }).then(
              async (r) => ({ status: r.status, body: await r.json() }),
              () => undefined,
            ),
          );
        }
      }
      expect(httpAnswers).toHaveLength(300);
      try {
        const opened = (await Promise.all(sockets.map(settled))).filter(Boolean).length;
        // The HTTP waits let in stay in line (they are answered only at the holder's release); the rest are refused at once.
        const refusedHttp: { status: number; body: any }[] = [];
        for (const answer of httpAnswers) void answer.then((a) => a && refusedHttp.push(a));
        const line = await until(
          () => api.get(path),
          (r) => r.body.waiters === opened + (300 - refusedHttp.length),
          60_000,
        );
        expect(opened + (300 - refusedHttp.length)).toBe(WAITERS_CAP);
        expect(line.body.waiters).toBe(WAITERS_CAP);
        for (const refused of refusedHttp) expect(refused).toMatchObject({ status: 429, body: { error: "rate_limited", limit: "waiters_per_lock" } });
      } finally {
        leave.abort();
        for (const s of sockets) s.ws.close();
      }
      expect((await api.post(`${path}/release`, { token: holder.body.token })).status).toBe(200);
    }, 180_000);

    it(`500 socket handshakes sent together over ten locks of a namespace with room for ${SOCKETS_CAP} sockets: exactly ${SOCKETS_CAP} open`, async () => {
      const run = unique("spread");
      const sockets: TestSocket[] = [];
      for (let i = 0; i < 500; i++) sockets.push(openSocket(base(), `/v1/locks/${run}-${i % 10}/wait`, KEYS.spread));
      try {
        const opened = (await Promise.all(sockets.map(settled))).filter(Boolean).length;
        expect(opened).toBe(SOCKETS_CAP);
      } finally {
        for (const s of sockets) s.ws.close();
      }
    }, 180_000);
  });
}
