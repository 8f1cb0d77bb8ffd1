// A watch socket's limits are a wait socket's (docs/API.md, "Watching a lock"), against the Worker served by
// workerd over real TCP: it counts towards the caps on a lock's waiters and a namespace's sockets (refused with 429
// before any socket), it must send its watch within the idle limit, and its key may come as a subprotocol.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SOCKET_IDLE_MS } from "../../../src/limits";
import { keyAsProtocol, SOCKET_PROTOCOL } from "../../../src/wire/socketProtocol";
import { httpClient } from "../../support/http";
import { handshakeAnswer, openSocket, type TestSocket } from "../../support/waitSocket";
import { type Stores, startForKeys, stopAll } from "../../support/workerServers";

const KEYS = { lockcap: "watch-lockcap-key-1", nscap: "watch-nscap-key-1", idle: "watch-idle-key-1", flood: "watch-flood-key-1" };
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;

beforeAll(async () => {
  servers = await startForKeys(KEYS, { MAX_WAITERS_PER_LOCK: "2", MAX_SOCKETS_PER_NAMESPACE: "3" });
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
});

/** A watch socket that has sent its watch and been pushed the first state. */
async function watcher(base: string, path: string, key: string): Promise<TestSocket> {
  const s = openSocket(base, `${path}/watch`, key);
  await s.opened;
  s.ws.send(JSON.stringify({ type: "watch" }));
  expect(await s.next()).toMatchObject({ type: "state" });
  return s;
}

const handshake = (base: string, path: string, key: string) =>
  handshakeAnswer(base, `${path}/watch`, { "sec-websocket-protocol": `${SOCKET_PROTOCOL}, ${keyAsProtocol(key)}` });

describe.each(["redis", "durable"] as const)("%s store", (store) => {
  const base = () => servers[store].url;

  it("a watcher and a waiter share the lock's cap: the next socket is refused 429 before it opens", async () => {
    const path = `/v1/locks/${unique("watch-cap")}`;
    const first = await watcher(base(), path, KEYS.lockcap);
    const second = await watcher(base(), path, KEYS.lockcap);
    const refused = await handshake(base(), path, KEYS.lockcap);
    expect([refused.status, refused.body]).toEqual([429, expect.objectContaining({ error: "rate_limited", limit: "waiters_per_lock" })]);
    // An HTTP wait meets the same cap while the watchers are there.
    const http = httpClient(base(), KEYS.lockcap);
    const held = await http.post(`${path}/acquire`, { ttlMs: 10_000 });
    expect((await http.post(`${path}/acquire`, { ttlMs: 10_000, waitMs: 1000 })).body).toMatchObject({ error: "rate_limited" });
    first.ws.close();
    second.ws.close();
    await Promise.all([first.closed, second.closed]);
    await http.post(`${path}/release`, { token: held.body.token });
  });

  it("a watch socket that floods after its watch is ended at its next message, with one answer; another watcher of the lock goes on", async () => {
    const path = `/v1/locks/${unique("watch-flood")}`;
    const calm = await watcher(base(), path, KEYS.flood);
    const flooder = await watcher(base(), path, KEYS.flood);
    const messages: any[] = [];
    flooder.ws.addEventListener("message", (e) => {
      messages.push(JSON.parse(String(e.data)));
    });
    for (let i = 0; i < 500; i++) flooder.ws.send(JSON.stringify({ type: "watch" }));
    expect(await flooder.closed).toBe(1000);
    // One answer for the whole burst, not one per frame: the socket ended at the first message past its watch.
    expect(messages).toEqual([
      expect.objectContaining({ type: "error", status: 400, error: "invalid_body", message: expect.stringMatching(/takes one message/) }),
    ]);
    // The other watcher is still pushed the lock's state.
    const http = httpClient(base(), KEYS.flood);
    const held = await http.post(`${path}/acquire`, { ttlMs: 10_000 });
    expect(await calm.next()).toMatchObject({ type: "state", state: { held: true, fence: held.body.fence } });
    calm.ws.close();
    await calm.closed;
    await http.post(`${path}/release`, { token: held.body.token });
  });

  it("watchers count towards the namespace's sockets, across its locks", async () => {
    const open = [];
    for (let i = 0; i < 3; i++) open.push(await watcher(base(), `/v1/locks/${unique("watch-ns")}`, KEYS.nscap));
    const refused = await handshake(base(), `/v1/locks/${unique("watch-ns")}`, KEYS.nscap);
    expect([refused.status, refused.body]).toEqual([429, expect.objectContaining({ error: "rate_limited", limit: "sockets_per_namespace" })]);
    for (const s of open) s.ws.close();
    await Promise.all(open.map((s) => s.closed));
  });

  it(`a watch socket that sends nothing is closed after ${SOCKET_IDLE_MS} ms with 408 socket_idle`, async () => {
    const s = openSocket(base(), `/v1/locks/${unique("watch-idle")}/watch`, KEYS.idle);
    await s.opened;
    const openedAt = Date.now();
    expect(await s.next(SOCKET_IDLE_MS + 5000)).toMatchObject({
      type: "error",
      status: 408,
      error: "socket_idle",
      message: expect.stringMatching(/no watch came/),
    });
    expect(Date.now() - openedAt).toBeGreaterThan(SOCKET_IDLE_MS - 500);
    expect(await s.closed).toBe(1000);
  });
});
