// The limits of wait sockets, against the Worker served by workerd over real TCP on both
// stores: one socket's messages one at a time and no faster than allowed, the caps on waiters
// per lock and sockets per namespace (refused before any socket, nothing lost for the others),
// the idle limits, and the API key as a subprotocol only on a wait socket's handshake.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PICKUP_MS, SOCKET_IDLE_MS, SOCKET_MESSAGES_PER_SECOND } from "../../../src/limits";
import { keyAsProtocol, SOCKET_PROTOCOL } from "../../../src/wire/socketProtocol";
import { httpClient } from "../../support/http";
import { handshakeAnswer, openSocket, socketWaiter, type TestSocket, takeGrant } from "../../support/waitSocket";
import { type Stores, startForKeys, stopAll, until } from "../../support/workerServers";

/**
 * One namespace per cap, so one case's sockets never count against another's. `line`: the case with a socket in
 * line behind a flooder, and the rate case, open their sockets with keys no other case floods with (a flood refuses its
 * key's new sockets for a while, and a flood case runs just before each).
 */
const KEYS = {
  flood: "limits-flood-key-1",
  line: "limits-line-key-1",
  rate: "limits-rate-key-1",
  waiters: "limits-waiters-key-1",
  sockets: "limits-sockets-key-1",
  idle: "limits-idle-key-1",
  mixed: "limits-mixed-key-1",
};
const WAITERS_CAP = 3;
const SOCKETS_CAP = 4;
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;

beforeAll(async () => {
  servers = await startForKeys(KEYS, { MAX_WAITERS_PER_LOCK: String(WAITERS_CAP), MAX_SOCKETS_PER_NAMESPACE: String(SOCKETS_CAP) });
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
});

/** Every message up to the socket's close, and the close code. */
async function lastMessages(s: TestSocket): Promise<{ messages: any[]; code: number }> {
  const messages: any[] = [];
  s.ws.addEventListener("message", (e) => {
    messages.push(JSON.parse(String(e.data)));
  });
  const code = await s.closed;
  return { messages, code };
}

/** A wait socket's handshake with a key, read to its end (a refusal is a plain HTTP answer). */
const handshake = (base: string, path: string, key: string) => handshakeAnswer(base, path, { Authorization: `Bearer ${key}` });

for (const store of ["redis", "durable"] as const) {
  describe(`${store} store`, () => {
    const base = () => servers[store].url;

    it("a kept socket that floods heartbeats is refused at once, for the messages it has in the gate, and closed; its lease stays", async () => {
      const api = httpClient(base(), KEYS.flood);
      const path = `/v1/locks/${unique("flood")}`;
      const holder = await socketWaiter(base(), `${path}/wait`, KEYS.flood, { ttlMs: 30_000, waitMs: 5000, keep: true });
      const grant = await takeGrant(holder);
      const seen = lastMessages(holder);
      // As fast as the connection drains, never waiting for an answer.
      for (let i = 0; i < 500; i++) holder.ws.send(JSON.stringify({ type: "heartbeat" }));
      const { messages, code } = await seen;
      expect(code).toBe(1000);
      // One refusal, the last word: 429 for its messages, with the reason a burst meets first (two were in the gate
      // when the third came: each is handled a turn after it arrives, so a burst is counted as it comes).
      const errors = messages.filter((m) => m.type === "error");
      expect(errors).toHaveLength(1);
      expect(messages.at(-1)).toBe(errors[0]);
      expect(errors[0]).toMatchObject({ type: "error", status: 429, error: "rate_limited", limit: "socket_messages" });
      expect(errors[0].message).toMatch(/two of its messages were still being handled/);
      expect(errors[0].retryAfterMs).toBeGreaterThan(0);
      // Refused before it was let to run the store for the burst: usually not one of the 500 heartbeats is answered (the
      // two in the gate are dropped with the socket); on a busy machine, where the first frames trickle in, one or two
      // may be handled before two pile up. A gate that let a burst through would answer up to its bucket (18).
      expect(messages.filter((m) => m.type === "heartbeat").length).toBeLessThanOrEqual(5);
      // Closing the socket released nothing: the lease is the holder's, over HTTP too.
      expect((await api.get(path)).body).toMatchObject({ held: true, fence: grant.fence });
      expect((await api.post(`${path}/release`, { token: grant.token })).status).toBe(200);
    });

    it("a socket refused for flooding is closed alone: another socket waiting on the same lock keeps its place and is granted once the lease is released", async () => {
      const api = httpClient(base(), KEYS.line);
      const path = `/v1/locks/${unique("flood-line")}`;
      const holder = await socketWaiter(base(), `${path}/wait`, KEYS.line, { ttlMs: 30_000, waitMs: 5000, keep: true });
      const grant = await takeGrant(holder);
      // Two waiters in line behind the flooder, on the same lock (so in the same lock object):
      // a socket first, then an HTTP wait, to see the socket keep its place ahead of it.
      const inLine = await socketWaiter(base(), `${path}/wait`, KEYS.line, { ttlMs: 30_000, waitMs: 20_000 });
      await until(
        () => api.get(path),
        (r) => r.body.waiters === 1,
      );
      let inLineClosed = false;
      void inLine.closed.then(() => {
        inLineClosed = true;
      });
      const behind = api.post(`${path}/acquire`, { ttlMs: 30_000, waitMs: 20_000 });
      // Read at the end; should the case fail before, its server's stop ends this wait, which is no error of its own.
      behind.catch(() => {});
      await until(
        () => api.get(path),
        (r) => r.body.waiters === 2,
      );
      const seen = lastMessages(holder);
      for (let i = 0; i < 500; i++) holder.ws.send(JSON.stringify({ type: "heartbeat" }));
      const { messages, code } = await seen;
      // The flooder was refused for its messages and closed...
      expect(code).toBe(1000);
      expect(messages.at(-1)).toMatchObject({ type: "error", status: 429, error: "rate_limited", limit: "socket_messages" });
      // ...and nothing else: its lease stays, the socket behind it is still open and first in line.
      expect((await api.get(path)).body).toMatchObject({ held: true, fence: grant.fence, waiters: 2 });
      expect(inLineClosed).toBe(false);
      expect((await api.post(`${path}/release`, { token: grant.token })).status).toBe(200);
      const next = await takeGrant(inLine);
      expect(next.fence).toBeGreaterThan(grant.fence);
      // The HTTP wait that came after it is still waiting, until the socket's lease is released.
      expect((await api.get(path)).body).toMatchObject({ held: true, fence: next.fence, waiters: 1 });
      expect((await api.post(`${path}/release`, { token: next.token })).status).toBe(200);
      const last = await behind;
      expect(last.status).toBe(200);
      expect(last.body.fence).toBeGreaterThan(next.fence);
      expect((await api.post(`${path}/release`, { token: last.body.token })).status).toBe(200);
    });

    it(`a socket may send ${SOCKET_MESSAGES_PER_SECOND} messages a second: one answered at a time, the one past the rate is refused`, async () => {
      const api = httpClient(base(), KEYS.rate);
      const path = `/v1/locks/${unique("rate")}`;
      const holder = await socketWaiter(base(), `${path}/wait`, KEYS.rate, { ttlMs: 30_000, waitMs: 5000, keep: true });
      const grant = await takeGrant(holder);
      const started = Date.now();
      let answered = 0;
      let refused: any;
      // acquire and ack spent two of the bucket. Two heartbeats are kept in the gate (one handled, one
      // waiting: the most it lets in), so the socket sends as fast as the gate takes them and what runs
      // the bucket dry is the rate, not the round trip (one at a time, a busy runner's 50 ms round trips
      // refilled it as fast as they spent it).
      const heartbeat = () => holder.ws.send(JSON.stringify({ type: "heartbeat" }));
      heartbeat();
      for (let i = 0; i < SOCKET_MESSAGES_PER_SECOND * 10 && !refused; i++) {
        heartbeat();
        const m = await holder.next();
        if (m.type === "heartbeat") answered++;
        else refused = m;
      }
      const took = Date.now() - started;
      expect(refused).toMatchObject({ type: "error", status: 429, error: "rate_limited", limit: "socket_messages" });
      // Refused after the bucket ran dry, plus what refilled while the heartbeats ran. The refusal is
      // answered at once, so it can overtake the answer to the heartbeat waiting in the gate ahead of it.
      expect(answered).toBeGreaterThanOrEqual(SOCKET_MESSAGES_PER_SECOND - 3);
      expect(answered).toBeLessThanOrEqual(SOCKET_MESSAGES_PER_SECOND - 2 + Math.ceil((took * SOCKET_MESSAGES_PER_SECOND) / 1000) + 1);
      expect(await holder.closed).toBe(1000);
      expect((await api.post(`${path}/release`, { token: grant.token })).status).toBe(200);
    });

    it(`a lock takes at most MAX_WAITERS_PER_LOCK waiters (${WAITERS_CAP} here): the next socket and HTTP wait get 429 before any socket, the waiters in line lose nothing`, async () => {
      const api = httpClient(base(), KEYS.waiters);
      const path = `/v1/locks/${unique("crowd")}`;
      const holder = (await api.post(`${path}/acquire`, { ttlMs: 30_000 })).body;
      const waiters: TestSocket[] = [];
      for (let i = 0; i < WAITERS_CAP; i++) {
        waiters.push(await socketWaiter(base(), `${path}/wait`, KEYS.waiters, { ttlMs: 5000, waitMs: 20_000 }));
        await until(
          () => api.get(path),
          (r) => r.body.waiters === i + 1,
        );
      }
      const refused = await handshake(base(), `${path}/wait`, KEYS.waiters);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ error: "rate_limited", limit: "waiters_per_lock" });
      expect(refused.body.retryAfterMs).toBeGreaterThan(0);
      expect(refused.headers).toMatch(/retry-after: \d+/i);
      const httpWait = await api.post(`${path}/acquire`, { ttlMs: 5000, waitMs: 5000 });
      expect(httpWait.status).toBe(429);
      expect(httpWait.body).toMatchObject({ error: "rate_limited", limit: "waiters_per_lock" });
      // The line is as it was: each waiter is handed the lock in turn.
      expect((await api.get(path)).body.waiters).toBe(WAITERS_CAP);
      await api.post(`${path}/release`, { token: holder.token });
      for (const w of waiters) {
        const grant = await takeGrant(w);
        expect((await api.post(`${path}/release`, { token: grant.token })).status).toBe(200);
      }
    });

    it(`a namespace has at most MAX_SOCKETS_PER_NAMESPACE wait sockets open (${SOCKETS_CAP} here), over all its locks; one that closes makes room`, async () => {
      const api = httpClient(base(), KEYS.sockets);
      const holders: Array<{ path: string; token: string }> = [];
      const open: TestSocket[] = [];
      for (let i = 0; i < SOCKETS_CAP; i++) {
        const path = `/v1/locks/${unique(`ns-${i}`)}`;
        holders.push({ path, token: (await api.post(`${path}/acquire`, { ttlMs: 30_000 })).body.token });
        open.push(await socketWaiter(base(), `${path}/wait`, KEYS.sockets, { ttlMs: 5000, waitMs: 30_000 }));
        await until(
          () => api.get(path),
          (r) => r.body.waiters === 1,
        );
      }
      const path = `/v1/locks/${unique("ns-over")}`;
      const refused = await handshake(base(), `${path}/wait`, KEYS.sockets);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ error: "rate_limited", limit: "sockets_per_namespace" });
      // Another namespace is not held back by this one's sockets.
      expect((await handshake(base(), `${path}/wait`, KEYS.waiters)).status).toBe(101);
      // The waiters already there lose nothing.
      await api.post(`${holders[0].path}/release`, { token: holders[0].token });
      const grant = await takeGrant(open[0]);
      await api.post(`${holders[0].path}/release`, { token: grant.token });
      // That socket closed (held): the namespace has room again once its lock object tells.
      await until(
        () => handshake(base(), `${path}/wait`, KEYS.sockets),
        (r) => r.status === 101,
      );
      for (const s of open.slice(1)) s.ws.close();
      for (const h of holders.slice(1)) await api.post(`${h.path}/release`, { token: h.token });
    });

    it(`a socket that sends no acquire within ${SOCKET_IDLE_MS} ms is closed with 408 socket_idle`, async () => {
      const s = openSocket(base(), `/v1/locks/${unique("idle")}/wait`, KEYS.idle);
      await s.opened;
      const openedAt = Date.now();
      const { messages, code } = await lastMessages(s);
      const after = Date.now() - openedAt;
      expect(code).toBe(1000);
      expect(messages).toEqual([expect.objectContaining({ type: "error", status: 408, error: "socket_idle" })]);
      // Not before the limit (the client's clock starts after the server's, so a little under it).
      expect(after).toBeGreaterThan(SOCKET_IDLE_MS - 500);
    }, 30_000);

    it("a socket offered a grant it does not acknowledge is closed with 409 lease_lost after the pickup time, and the next waiter gets the lock", async () => {
      const api = httpClient(base(), KEYS.idle);
      const path = `/v1/locks/${unique("unacked")}`;
      const holder = (await api.post(`${path}/acquire`, { ttlMs: 30_000 })).body;
      const silent = await socketWaiter(base(), `${path}/wait`, KEYS.idle, { ttlMs: 30_000, waitMs: 20_000 });
      await until(
        () => api.get(path),
        (r) => r.body.waiters === 1,
      );
      const next = await socketWaiter(base(), `${path}/wait`, KEYS.idle, { ttlMs: 30_000, waitMs: 20_000 });
      await until(
        () => api.get(path),
        (r) => r.body.waiters === 2,
      );
      await api.post(`${path}/release`, { token: holder.token });
      expect((await silent.next()).type).toBe("granted");
      const offeredAt = Date.now();
      const seen = await lastMessages(silent);
      expect(seen.code).toBe(1000);
      expect(seen.messages).toEqual([expect.objectContaining({ type: "error", status: 409, error: "lease_lost" })]);
      expect(Date.now() - offeredAt).toBeGreaterThan(PICKUP_MS - 500);
      const grant = await takeGrant(next);
      expect((await api.post(`${path}/release`, { token: grant.token })).status).toBe(200);
    });

    it("a kept socket whose lease ends with no heartbeat is closed with 408 socket_idle", async () => {
      const api = httpClient(base(), KEYS.idle);
      const path = `/v1/locks/${unique("lapsed")}`;
      const holder = await socketWaiter(base(), `${path}/wait`, KEYS.idle, { ttlMs: 600, waitMs: 5000, keep: true });
      const grant = await takeGrant(holder);
      const heldAt = Date.now();
      const { messages, code } = await lastMessages(holder);
      expect(code).toBe(1000);
      expect(messages).toEqual([expect.objectContaining({ type: "error", status: 408, error: "socket_idle" })]);
      expect(Date.now() - heldAt).toBeGreaterThan(300);
      // The lease did lapse: the lock is free for the next caller.
      expect((await api.post(`${path}/release`, { token: grant.token })).status).toBe(409);
      expect((await api.get(path)).body.held).toBe(false);
    });

    it("the key as a subprotocol opens a wait socket, and nothing else: a plain request with it and no Authorization is 401", async () => {
      const path = `/v1/locks/${unique("subprotocol")}`;
      const headers = { "sec-websocket-protocol": `${SOCKET_PROTOCOL}, ${keyAsProtocol(KEYS.idle)}`, "content-type": "application/json" };
      const plain = await fetch(`${base()}${path}/acquire`, { method: "POST", headers, body: JSON.stringify({ ttlMs: 5000 }) });
      expect(plain.status).toBe(401);
      expect(((await plain.json()) as any).error).toBe("unauthorized");
      expect((await fetch(`${base()}${path}`, { headers })).status).toBe(401);
      // The same subprotocols on the wait socket's handshake are the key (openSocket offers them).
      const s = await socketWaiter(base(), `${path}/wait`, KEYS.idle, { ttlMs: 5000, waitMs: 5000 });
      expect((await takeGrant(s)).token).toMatch(/^hf_/);
    });
  });
}

// The cap on waiters counts HTTP waits and sockets together, whichever came first (issue 53: the cases above fill a lock
// with sockets first, so a count that took the larger of the two rather than their sum passed them).
for (const store of ["redis", "durable"] as const) {
  describe(`${store} store: sockets and HTTP waits under one cap`, () => {
    const base = () => servers[store].url;

    it(`a lock full of HTTP waits (${WAITERS_CAP}) refuses a socket's handshake 429; one full of HTTP waits and a socket refuses the next socket and the next HTTP wait`, async () => {
      const api = httpClient(base(), KEYS.mixed);
      /** Waiting HTTP acquires, in line once the lock's count says so; each granted in turn is released, after its holder's. */
      const lineOf = async (path: string, n: number) => {
        const answers: ReturnType<typeof api.post>[] = [];
        for (let i = 0; i < n; i++) {
          const answer = api.post(`${path}/acquire`, { ttlMs: 5000, waitMs: 20_000 });
          answer.catch(() => {}); // read below; should the case fail first, its server's stop ends it
          answers.push(answer);
          await until(
            () => api.get(path),
            (r) => r.body.waiters === i + 1,
          );
        }
        return async (holderToken: string) => {
          let token = holderToken;
          for (const answer of answers) {
            expect((await api.post(`${path}/release`, { token })).status).toBe(200);
            const granted = await answer;
            expect(granted.status).toBe(200);
            token = granted.body.token;
          }
          return token;
        };
      };

      // Only HTTP waits: the socket's handshake is refused before any socket.
      const httpOnly = `/v1/locks/${unique("http-full")}`;
      const first = (await api.post(`${httpOnly}/acquire`, { ttlMs: 30_000 })).body;
      const grantHttpOnly = await lineOf(httpOnly, WAITERS_CAP);
      const socketRefused = await handshake(base(), `${httpOnly}/wait`, KEYS.mixed);
      expect(socketRefused.status).toBe(429);
      expect(socketRefused.body).toMatchObject({ error: "rate_limited", limit: "waiters_per_lock" });
      expect((await api.post(`${httpOnly}/release`, { token: await grantHttpOnly(first.token) })).status).toBe(200);

      // A mix at the cap, HTTP waits first, then a socket: the next socket and the next HTTP wait are refused.
      const mixed = `/v1/locks/${unique("mixed-full")}`;
      const second = (await api.post(`${mixed}/acquire`, { ttlMs: 30_000 })).body;
      const grantMixed = await lineOf(mixed, WAITERS_CAP - 1);
      const socket = await socketWaiter(base(), `${mixed}/wait`, KEYS.mixed, { ttlMs: 5000, waitMs: 20_000 });
      await until(
        () => api.get(mixed),
        (r) => r.body.waiters === WAITERS_CAP,
      );
      const nextSocket = await handshake(base(), `${mixed}/wait`, KEYS.mixed);
      expect(nextSocket.status).toBe(429);
      expect(nextSocket.body).toMatchObject({ error: "rate_limited", limit: "waiters_per_lock" });
      const nextHttp = await api.post(`${mixed}/acquire`, { ttlMs: 5000, waitMs: 5000 });
      expect(nextHttp.status).toBe(429);
      expect(nextHttp.body).toMatchObject({ error: "rate_limited", limit: "waiters_per_lock" });
      // The waiters in line lose nothing: the lock goes to each in turn, the socket last.
      expect((await api.post(`${mixed}/release`, { token: await grantMixed(second.token) })).status).toBe(200);
      const last = await takeGrant(socket);
      expect((await api.post(`${mixed}/release`, { token: last.token })).status).toBe(200);
    });

    it(`waits that left no longer count: at the cap (${WAITERS_CAP}), once its HTTP waits ran out, a new socket and a new HTTP wait are let in`, async () => {
      // Waits that left by running out, not by a hang-up the Worker withdraws: workerd served locally reports no client's
      // disconnect (src/http/deliveryConfirmed.ts), and the workerd pool, where a hang-up is reported, cannot set a lock
      // object's cap per case. Either way the wait leaves through the one registry the cap counts (line/Waiters.ts).
      const api = httpClient(base(), KEYS.mixed);
      const path = `/v1/locks/${unique("left")}`;
      const holder = (await api.post(`${path}/acquire`, { ttlMs: 30_000 })).body;
      const gaveUp = Array.from({ length: WAITERS_CAP }, () => api.post(`${path}/acquire`, { ttlMs: 5000, waitMs: 2000 }));
      for (const answer of gaveUp) answer.catch(() => {}); // read below; should the case fail first, its server's stop ends them
      await until(
        () => api.get(path),
        (r) => r.body.waiters === WAITERS_CAP,
      );
      expect((await handshake(base(), `${path}/wait`, KEYS.mixed)).status).toBe(429);
      for (const answer of gaveUp) expect((await answer).status).toBe(409);
      expect((await api.get(path)).body.waiters).toBe(0);
      expect((await handshake(base(), `${path}/wait`, KEYS.mixed)).status).toBe(101);
      const next = api.post(`${path}/acquire`, { ttlMs: 5000, waitMs: 20_000 });
      next.catch(() => {});
      await until(
        () => api.get(path),
        (r) => r.body.waiters === 1,
      );
      expect((await api.post(`${path}/release`, { token: holder.token })).status).toBe(200);
      const granted = await next;
      expect(granted.status).toBe(200);
      expect((await api.post(`${path}/release`, { token: granted.body.token })).status).toBe(200);
    });
  });
}
