import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { namespaceObjectOf } from "../../src/store/durable/NamespaceObjectRpc";
import worker from "../../src/worker";
import { api, envFor, uniqueName } from "../support/workers/api";
import { eventually } from "../support/workers/lockObjectHelpers";

/**
 * A client that flooded a wait socket is refused its next sockets by the
 * Worker itself, before any lock object hears of them
 * (src/http/waitSocket.ts; docs/guarantees.md, "A wait socket flood"): a
 * refused handshake costs no Durable Object request (each is billed, and
 * queues behind the object's other work). The lock objects would refuse it
 * too, with the same answer, so what shows the Worker's refusal is the
 * requests the Worker makes: its lock-object binding here passes every call
 * through to the real one and counts the handshakes it sends.
 *
 * Each case's keys have a namespace of their own (the Worker's API_KEYS for
 * these requests): a flood refuses its key's sockets for a while.
 */
const unique = (label: string) => uniqueName(label).replace(/[^A-Za-z0-9_-]/g, "-");

/** Two keys of one namespace of this case's own: a flooder and a bystander. */
function keysOf(label: string) {
  const ns = unique(label).slice(0, 40);
  const flooder = `${ns}-flooder-key`;
  const calm = `${ns}-calm-key`;
  return { ns, flooder, calm, API_KEYS: `${ns}:user:flooder=${flooder},${ns}:user:calm=${calm}` };
}

/** The real lock-object binding, with the socket handshakes the Worker sends it counted. */
function countingLockObjects() {
  const real = env.LOCK_OBJECT;
  const handshakes: string[] = [];
  const objects = {
    idFromName: (name: string) => real.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = real.get(id);
      return {
        fetch: (input: RequestInfo | URL, init?: RequestInit) => {
          handshakes.push(String(input));
          return stub.fetch(input, init);
        },
      };
    },
  } as unknown as Env["LOCK_OBJECT"];
  return { objects, handshakes };
}

/** A wait socket's handshake through the Worker (in workerd, Durable store): its status, the socket if it opened, the body if not. */
async function handshake(workerEnv: Env, key: string, name: string) {
  const res = await worker.fetch(
    new Request(`http://holdfast.test/v1/locks/${name}/wait`, { headers: { upgrade: "websocket", authorization: `Bearer ${key}` } }),
    workerEnv,
    createExecutionContext(),
  );
  const ws = res.webSocket ?? undefined;
  return { status: res.status, ws, body: ws ? undefined : ((await res.json()) as any) };
}

/** A kept socket that takes a lock, then sends heartbeats as fast as it can: answered 429 socket_messages and closed. */
async function flood(workerEnv: Env, key: string) {
  const { ws } = await handshake(workerEnv, key, unique("flood"));
  if (!ws) throw new Error("the flooder's first socket was refused");
  ws.accept();
  const messages: any[] = [];
  let closed = false;
  ws.addEventListener("message", (e) => {
    messages.push(JSON.parse(String(e.data)));
  });
  ws.addEventListener("close", () => {
    closed = true;
  });
  ws.send(JSON.stringify({ type: "acquire", ttlMs: 30_000, waitMs: 5000, keep: true }));
  const granted = await eventually(
    () => messages.find((m) => m.type === "granted"),
    (m) => m !== undefined,
  );
  ws.send(JSON.stringify({ type: "ack", token: granted.grant.token }));
  await eventually(
    () => messages.some((m) => m.type === "held"),
    (held) => held,
  );
  for (let i = 0; i < 50; i++) ws.send(JSON.stringify({ type: "heartbeat" }));
  await eventually(
    () => closed || messages.some((m) => m.type === "error"),
    (ended) => ended,
  );
  return messages.at(-1);
}

/**
 * The flooder's next handshake, made while its key is refused: it floods, runs `meanwhile`, and tries one socket.
 * The first flood's box is 1 s, which a busy machine (this pool runs every object in one isolate, so the flood's
 * tail slows all of it) can spend before the try; a try that opens (101) is closed and the key floods again,
 * which doubles its box. At most four floods (boxes of 1, 2, 4 and 8 s).
 */
async function nextTryAfterFlood(workerEnv: Env, key: string, meanwhile: () => Promise<void> = async () => {}) {
  for (let floods = 1; floods <= 4; floods++) {
    expect(await flood(workerEnv, key)).toMatchObject({ type: "error", status: 429, limit: "socket_messages" });
    await meanwhile();
    const next = await handshake(workerEnv, key, unique("next"));
    if (next.status !== 101) return next;
    next.ws?.accept();
    next.ws?.close(1000, "done");
  }
  throw new Error("four floods, and each time the flooder's next socket was let in");
}

describe("a flooder's next socket (Durable store, in workerd)", () => {
  it("is refused 429 socket_flood by the Worker: its handshake never reaches a lock object, while another key's does", async () => {
    const keys = keysOf("worker-refuses");
    const { objects, handshakes } = countingLockObjects();
    const workerEnv = envFor("durable", { API_KEYS: keys.API_KEYS, LOCK_OBJECT: objects });
    const refused = await nextTryAfterFlood(workerEnv, keys.flooder, async () => {
      handshakes.length = 0;
    });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: "rate_limited", limit: "socket_flood" });
    expect(handshakes).toEqual([]);
    // The count sees a handshake the Worker lets through: another key of the namespace opens its socket at the lock object.
    const calm = await handshake(workerEnv, keys.calm, unique("calm"));
    expect(calm.status).toBe(101);
    expect(handshakes).toEqual(["https://lock-object/wait-socket"]);
    calm.ws?.accept();
    calm.ws?.close(1000, "done");
  });

  it("is refused from the isolate's own memory when the namespace object never heard of the flood", async () => {
    // The namespace object is told of a flood in the background, and a tell that fails is only logged
    // (socketCaps.ts, penalize): its row is deleted here once it came, as though the tell had been lost.
    // A fake for a failure the pool cannot cause for real; the Worker and the lock object are real.
    const keys = keysOf("isolate-refuses");
    const workerEnv = envFor("durable", { API_KEYS: keys.API_KEYS });
    const namespaceObject = namespaceObjectOf(env.NAMESPACE_OBJECT, keys.ns, "sockets");
    const floods = () =>
      runInDurableObject(namespaceObject, (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM floods").one().n);
    const refused = await nextTryAfterFlood(workerEnv, keys.flooder, async () => {
      await eventually(floods, (n) => n > 0);
      await runInDurableObject(namespaceObject, (_o, state) => state.storage.sql.exec("DELETE FROM floods"));
      expect(await floods()).toBe(0);
    });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: "rate_limited", limit: "socket_flood" });
    expect(refused.body.retryAfterMs).toBeGreaterThan(0);
  });
});

describe("a plain GET of a socket's path (no Upgrade: websocket)", () => {
  it("is 426 upgrade_required with the way to do without the socket that the path's kind has", async () => {
    const { get } = api("durable");
    const name = unique("plain");
    const answers = {
      lock: await get(`/v1/locks/${name}/wait`),
      key: await get(`/v1/idempotency/${name}/wait`),
      election: await get(`/v1/elections/${name}/watch`),
    };
    for (const answer of Object.values(answers)) expect(answer).toMatchObject({ status: 426, body: { error: "upgrade_required" } });
    expect(answers.lock.body.message).toMatch(/^this path is a wait socket: .*POST \.\.\.\/acquire$/);
    // An idempotency key has no acquire (POST .../acquire is 404 there): its state is what a waiter without a socket reads.
    expect(answers.key.body.message).toMatch(/^this path is a wait socket: .*GET \/v1\/idempotency\/\{key\} until it is completed/);
    expect(answers.election.body.message).toMatch(/^this path is a watch socket: .*GET on the same path without \/watch$/);
    expect((await api("durable").post(`/v1/idempotency/${name}/acquire`, { ttlMs: 1000 })).status).toBe(404);
  });
});
