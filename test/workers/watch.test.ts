// Watching a lock (GET /v1/<kind>/<name>/watch): the lock's state is pushed on every change, on both stores,
// and a watcher that goes away is closed and counted out. The pushes are waited for (each within a deadline);
// how soon they come is measured by the bench-style run described in docs/API.md, not asserted here.
import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker, { LockObject } from "../../src/worker";
import { api, envFor, KEY_A, KEY_ADMIN, type StoreKind, uniqueName } from "./support/api";
import { eventually, lockObject } from "./support/lockObjectHelpers";

/** runInDurableObject, untyped: its inference on these stubs runs too deep for the compiler. */
const inObject = runInDurableObject as unknown as (stub: unknown, fn: (o: any, state: DurableObjectState) => unknown) => Promise<any>;

/** Each push must come within this of the change that caused it (generous: the machine is shared; the goal is 100 ms). */
const PUSH_DEADLINE_MS = 1000;

type State = Record<string, any>;

/** A watch socket of tenant-a on one lock: the states it was pushed, and a wait for the next that matches. */
async function watch(store: StoreKind, path: string) {
  const res = await worker.fetch(
    new Request(`http://holdfast.test${path}/watch`, { headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` } }),
    envFor(store),
    createExecutionContext(),
  );
  expect(res.status).toBe(101);
  const ws = res.webSocket as WebSocket;
  ws.accept();
  const states: State[] = [];
  const others: any[] = [];
  const waiting: Array<() => void> = [];
  let closed = false;
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data));
    if (m.type === "state") states.push(m.state);
    else others.push(m);
    for (const wake of waiting.splice(0)) wake();
  });
  ws.addEventListener("close", () => {
    closed = true;
    for (const wake of waiting.splice(0)) wake();
  });
  ws.send(JSON.stringify({ type: "watch" }));
  let read = 0;
  /** The next pushed state (after those already taken) that matches, within the deadline. */
  async function next(match: (s: State) => boolean, what: string): Promise<State> {
    const deadline = Date.now() + PUSH_DEADLINE_MS;
    for (;;) {
      while (read < states.length) {
        const s = states[read++];
        if (match(s)) return s;
      }
      const left = deadline - Date.now();
      if (left <= 0 || closed)
        throw new Error(`no pushed state ${what} within ${PUSH_DEADLINE_MS} ms; pushed: ${JSON.stringify(states)} ${JSON.stringify(others)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        waiting.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
  return { ws, states, others, next, isClosed: () => closed };
}

describe.each<StoreKind>(["redis", "durable"])("watching a mutex (%s store)", (store) => {
  const { post } = api(store);

  it("pushes the state at once, then after an acquire, a release, a force release and an expiry", async () => {
    const name = uniqueName("watched");
    const path = `/v1/locks/${name}`;
    const w = await watch(store, path);
    expect(await w.next((s) => s.held === false, "free at first")).toMatchObject({ name, held: false, waiters: 0 });

    const held = (await post(`${path}/acquire`, { ttlMs: 30_000, holder: "job <1>" })).body;
    expect(await w.next((s) => s.held === true, "held")).toMatchObject({
      held: true,
      fence: held.fence,
      holder: "job <1>",
      expiresAt: held.expiresAt,
    });

    expect((await post(`${path}/release`, { token: held.token })).status).toBe(200);
    await w.next((s) => s.held === false, "free after the release");

    const second = (await post(`${path}/acquire`, { ttlMs: 30_000 })).body;
    await w.next((s) => s.held === true && s.fence === second.fence, "held again");
    const forced = await post(`${path}/force-release`, { reason: "watch test" }, { key: KEY_ADMIN });
    expect(forced.status).toBe(200);
    await w.next((s) => s.held === false, "free after the force release");

    // An expiry is nobody's write: the object's one timer at the lease's end finds it.
    const short = (await post(`${path}/acquire`, { ttlMs: 300 })).body;
    await w.next((s) => s.held === true && s.fence === short.fence, "held briefly");
    await w.next((s) => s.held === false, "free after the lease lapsed");
    expect(w.others).toEqual([]);
    w.ws.close();
  });

  it("counts waiters coming and going, without taking a place in line", async () => {
    const name = uniqueName("watched-line");
    const path = `/v1/locks/${name}`;
    const w = await watch(store, path);
    await w.next((s) => s.held === false, "free at first");
    const held = (await post(`${path}/acquire`, { ttlMs: 30_000 })).body;
    await w.next((s) => s.held === true && s.waiters === 0, "held, nobody waiting");
    const waiting = post(`${path}/acquire`, { ttlMs: 30_000, waitMs: 10_000 });
    await w.next((s) => s.waiters === 1, "one waiter");
    await post(`${path}/release`, { token: held.token });
    const handed = (await waiting).body;
    await w.next((s) => s.held === true && s.fence === handed.fence && s.waiters === 0, "handed to the waiter");
    w.ws.close();
  });

  it("a watcher that goes away is closed and counted out", async () => {
    const name = uniqueName("watch-gone");
    const w = await watch(store, `/v1/locks/${name}`);
    await w.next((s) => s.held === false, "free at first");
    const liveWatchers = (): Promise<number> => inObject(lockObject(name), (o: any) => o.watchers.liveCount as number);
    const namespaceCount = () =>
      inObject(
        env.NAMESPACE_OBJECT.get(env.NAMESPACE_OBJECT.idFromName("tenant-a")),
        (_o: unknown, state: DurableObjectState) =>
          state.storage.sql.exec("SELECT count FROM sockets WHERE object = ?", `mutex:${name}`).toArray() as unknown as Array<{ count: number }>,
      );
    expect(await liveWatchers()).toBe(1);
    expect(await namespaceCount()).toEqual([{ count: 1 }]);
    w.ws.close(1000, "done");
    await eventually(liveWatchers, (n) => n === 0);
    await eventually(namespaceCount, (rows) => rows.length === 0);
    // Its server side is closed too, and a change now reads nothing for it: nobody is left to push to.
    const open = await inObject(
      lockObject(name),
      (_o: unknown, state: DurableObjectState) => state.getWebSockets("watch").filter((s) => s.readyState === WebSocket.OPEN).length,
    );
    expect(open).toBe(0);
    await post(`/v1/locks/${name}/acquire`, { ttlMs: 1000 });
    expect(await liveWatchers()).toBe(0);
  });
});

describe.each<StoreKind>(["redis", "durable"])("watching the other kinds (%s store)", (store) => {
  const { post } = api(store);

  it("a semaphore's state, with when its first holder's lease ends", async () => {
    const name = uniqueName("watched-sem");
    const path = `/v1/semaphores/${name}`;
    const w = await watch(store, path);
    expect(await w.next((s) => s.holders === 0, "free")).toMatchObject({ name, expiresAt: null });
    const grant = (await post(`${path}/acquire`, { limit: 3, ttlMs: 400 })).body;
    expect(await w.next((s) => s.holders === 1, "one holder")).toMatchObject({ used: 1, expiresAt: grant.expiresAt });
    await w.next((s) => s.holders === 0, "its lease lapsed");
    w.ws.close();
  });

  it("a read-write lock's, and an idempotency key's as GET answers them", async () => {
    const rw = await watch(store, `/v1/rwlocks/${uniqueName("watched-rw")}`);
    await rw.next((s) => s.mode === "free", "free");
    const key = uniqueName("watched-key");
    const k = await watch(store, `/v1/idempotency/${key}`);
    expect(await k.next((s) => s.state === "absent", "absent")).toEqual({ state: "absent" });
    const begun = (await post(`/v1/idempotency/${key}/begin`, { ttlMs: 30_000 })).body;
    await k.next((s) => s.state === "started" && s.fence === begun.fence, "started");
    await post(`/v1/idempotency/${key}/complete`, { token: begun.token, response: { ok: "<b>" } });
    expect(await k.next((s) => s.state === "completed", "completed")).toMatchObject({ response: { ok: "<b>" } });
    rw.ws.close();
    k.ws.close();
  });
});

// Woken from hibernation: stood in for by a second LockObject on the same state (see hibernation.test.ts).
it("woken, the object finds its watchers by their sockets and pushes only what changed since it last did (Durable store)", async () => {
  const name = uniqueName("watch-woken");
  const ref = { ns: "tenant-a", name };
  const w = await watch("durable", `/v1/locks/${name}`);
  await w.next((s) => s.held === false, "free at first");
  const woken = await inObject(lockObject(name), (_o: unknown, state: DurableObjectState) => {
    const o = new LockObject(state, env as never);
    return { o, live: (o as any).watchers.liveCount };
  });
  expect(woken.live).toBe(1);
  // The same state again is not pushed again (the digest kept with the socket); the acquire is.
  await inObject(lockObject(name), () =>
    woken.o.run("mutex", "acquire", [ref, { token: "woken-holder-token", mode: "new", ttlMs: 30_000, requestId: "rq-watch-woken", watch: false }]),
  );
  await w.next((s) => s.held === true, "held, pushed by the woken object");
  expect(w.states.map((s) => s.held)).toEqual([false, true]);
  w.ws.close();
});

describe("a watch socket's limits", () => {
  it("refuses a message other than its one watch, and a plain GET of the path", async () => {
    const { get } = api("durable");
    const name = uniqueName("watch-bad");
    expect((await get(`/v1/locks/${name}/watch`)).status).toBe(426);
    const res = await worker.fetch(
      new Request(`http://holdfast.test/v1/locks/${name}/watch`, { headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` } }),
      envFor("durable"),
      createExecutionContext(),
    );
    const ws = res.webSocket as WebSocket;
    ws.accept();
    const last = new Promise<any>((resolve) => ws.addEventListener("message", (e) => resolve(JSON.parse(String(e.data)))));
    ws.send(JSON.stringify({ type: "acquire", ttlMs: 1000 }));
    expect(await last).toMatchObject({ type: "error", status: 400, error: "invalid_body" });
  });
});
