// Watching a lock (GET /v1/<kind>/<name>/watch): the lock's state is pushed on every change, on both stores,
// and a watcher that goes away is closed and counted out. A push that follows a change arrives within
// PUSH_AT_ONCE_MS of it (measured from the write's answer, or from the lease's end for an expiry); the
// bench-style run described in docs/API.md measures how soon more finely.
import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker, { LockObject } from "../../../src/worker";
import { api, envFor, KEY_A, KEY_ADMIN, type StoreKind, uniqueName } from "../../support/workers/api";
import { namespaceObjectOf } from "../../../src/store/durable/NamespaceObjectRpc";
import { eventually, lockObject } from "../../support/workers/lockObjectHelpers";

/** runInDurableObject, untyped: its inference on these stubs runs too deep for the compiler. */
const inObject = runInDurableObject as unknown as (stub: unknown, fn: (o: any, state: DurableObjectState) => unknown) => Promise<any>;

/** How long a wait for a push may take before the test says none came (the bound on latency is PUSH_AT_ONCE_MS). */
const PUSH_DEADLINE_MS = 2000;
/**
 * "At once": a push arrives within this of the change that caused it. Generous (the machine is shared, the
 * goal is 100 ms: 300 ms was passed by 26 ms with three test files at once at load 10), but under what a
 * watcher would notice as late: a push held back 800 ms (to a later alarm or sweep) fails it. The
 * first state, which needs a read of the lock, may also take what a read took just before (watch()).
 */
const PUSH_AT_ONCE_MS = 600;

type State = Record<string, any>;

/** A watch socket of tenant-a on one lock: the states it was pushed, and a wait for the next that matches. */
async function watch(store: StoreKind, path: string) {
  // The first state answers the watch message with a read of the lock: it may take as long as a read takes here
  // and now (a loaded machine's), on top of PUSH_AT_ONCE_MS. Timed with a GET of the lock just before.
  const readStarted = Date.now();
  expect((await api(store).get(path)).status).toBe(200);
  const firstWithinMs = PUSH_AT_ONCE_MS + (Date.now() - readStarted);
  const res = await worker.fetch(
    new Request(`http://holdfast.test${path}/watch`, { headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` } }),
    envFor(store),
    createExecutionContext(),
  );
  expect(res.status).toBe(101);
  const ws = res.webSocket as WebSocket;
  ws.accept();
  const states: State[] = [];
  /** When each state arrived (Date.now()), by index in `states`. */
  const arrivals: number[] = [];
  const others: any[] = [];
  const waiting: Array<() => void> = [];
  let closed = false;
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data));
    if (m.type === "state") {
      states.push(m.state);
      arrivals.push(Date.now());
    } else others.push(m);
    for (const wake of waiting.splice(0)) wake();
  });
  ws.addEventListener("close", () => {
    closed = true;
    for (const wake of waiting.splice(0)) wake();
  });
  const watchedAt = Date.now();
  ws.send(JSON.stringify({ type: "watch" }));
  let read = 0;
  /**
   * The next pushed state (after those already taken) that matches, within the deadline; with `since` (when
   * the change that causes it was made), one that arrived within `withinMs` (PUSH_AT_ONCE_MS) of it.
   */
  async function next(match: (s: State) => boolean, what: string, since?: number, withinMs = PUSH_AT_ONCE_MS): Promise<State> {
    const deadline = Date.now() + PUSH_DEADLINE_MS;
    for (;;) {
      while (read < states.length) {
        const s = states[read];
        const arrivedAt = arrivals[read++];
        if (!match(s)) continue;
        if (since !== undefined) expect(arrivedAt - since, `ms from the change to the push of the state ${what}`).toBeLessThanOrEqual(withinMs);
        return s;
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
  /** The first state, the watch message's answer: within firstWithinMs of sending it. */
  const first = (match: (s: State) => boolean, what: string) => next(match, what, watchedAt, firstWithinMs);
  return { ws, states, others, next, first, isClosed: () => closed };
}

/** A request's answer, and when it arrived: the change it made was made by then. */
async function timed<T>(request: Promise<T>): Promise<T & { at: number }> {
  const answer = await request;
  return { ...answer, at: Date.now() };
}

describe.each<StoreKind>(["redis", "durable"])("watching a mutex (%s store)", (store) => {
  const { post } = api(store);

  it("pushes the state at once, then after an acquire, a release, a force release and an expiry", async () => {
    const name = uniqueName("watched");
    const path = `/v1/locks/${name}`;
    const w = await watch(store, path);
    // The first state answers the watch message itself.
    expect(await w.first((s) => s.held === false, "free at first")).toMatchObject({ name, held: false, waiters: 0 });

    const acquired = await timed(post(`${path}/acquire`, { ttlMs: 30_000, holder: "job <1>" }));
    const held = acquired.body;
    expect(await w.next((s) => s.held === true, "held", acquired.at)).toMatchObject({
      held: true,
      fence: held.fence,
      holder: "job <1>",
      expiresAt: held.expiresAt,
    });

    const released = await timed(post(`${path}/release`, { token: held.token }));
    expect(released.status).toBe(200);
    await w.next((s) => s.held === false, "free after the release", released.at);

    const second = await timed(post(`${path}/acquire`, { ttlMs: 30_000 }));
    await w.next((s) => s.held === true && s.fence === second.body.fence, "held again", second.at);
    const forced = await timed(post(`${path}/force-release`, { reason: "watch test" }, { key: KEY_ADMIN }));
    expect(forced.status).toBe(200);
    await w.next((s) => s.held === false, "free after the force release", forced.at);

    // An expiry is nobody's write: the object's one timer at the lease's end finds it (the change is the lease's end).
    const short = await timed(post(`${path}/acquire`, { ttlMs: 300 }));
    await w.next((s) => s.held === true && s.fence === short.body.fence, "held briefly", short.at);
    await w.next((s) => s.held === false, "free after the lease lapsed", short.body.expiresAt);
    expect(w.others).toEqual([]);
    w.ws.close();
  });

  it("counts waiters coming and going, without taking a place in line", async () => {
    const name = uniqueName("watched-line");
    const path = `/v1/locks/${name}`;
    const w = await watch(store, path);
    await w.first((s) => s.held === false, "free at first");
    const held = await timed(post(`${path}/acquire`, { ttlMs: 30_000 }));
    await w.next((s) => s.held === true && s.waiters === 0, "held, nobody waiting", held.at);
    // A waiter's request is answered only once it is granted: its joining the line is timed from when it was sent.
    const waitSentAt = Date.now();
    const waiting = timed(post(`${path}/acquire`, { ttlMs: 30_000, waitMs: 10_000 }));
    await w.next((s) => s.waiters === 1, "one waiter", waitSentAt);
    await post(`${path}/release`, { token: held.body.token });
    const handed = await waiting;
    await w.next((s) => s.held === true && s.fence === handed.body.fence && s.waiters === 0, "handed to the waiter", handed.at);
    w.ws.close();
  });

  it("a watcher that goes away is closed and counted out", async () => {
    const name = uniqueName("watch-gone");
    const w = await watch(store, `/v1/locks/${name}`);
    await w.first((s) => s.held === false, "free at first");
    const liveWatchers = (): Promise<number> => inObject(lockObject(name), (o: any) => o.watchSockets.liveCount as number);
    const namespaceCount = () =>
      inObject(
        namespaceObjectOf(env.NAMESPACE_OBJECT, "tenant-a", "sockets"),
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
    expect(await w.first((s) => s.holders === 0, "free")).toMatchObject({ name, expiresAt: null });
    const acquired = await timed(post(`${path}/acquire`, { limit: 3, ttlMs: 400 }));
    const grant = acquired.body;
    expect(await w.next((s) => s.holders === 1, "one holder", acquired.at)).toMatchObject({ used: 1, expiresAt: grant.expiresAt });
    await w.next((s) => s.holders === 0, "its lease lapsed", grant.expiresAt);
    w.ws.close();
  });

  it("a read-write lock's, and an idempotency key's as GET answers them", async () => {
    const rw = await watch(store, `/v1/rwlocks/${uniqueName("watched-rw")}`);
    await rw.first((s) => s.mode === "free", "free");
    const key = uniqueName("watched-key");
    const k = await watch(store, `/v1/idempotency/${key}`);
    expect(await k.first((s) => s.state === "absent", "absent")).toEqual({ state: "absent" });
    const begun = await timed(post(`/v1/idempotency/${key}/begin`, { ttlMs: 30_000 }));
    await k.next((s) => s.state === "started" && s.fence === begun.body.fence, "started", begun.at);
    const completed = await timed(post(`/v1/idempotency/${key}/complete`, { token: begun.body.token, response: { ok: "<b>" } }));
    expect(await k.next((s) => s.state === "completed", "completed", completed.at)).toMatchObject({ response: { ok: "<b>" } });
    rw.ws.close();
    k.ws.close();
  });
});

// Woken from hibernation: stood in for by a second LockObject on the same state (see test/lockObject/hibernation.workers.test.ts).
it("woken, the object finds its watch sockets by their tag and pushes only what changed since it last did (Durable store)", async () => {
  const name = uniqueName("watch-woken");
  const ref = { ns: "tenant-a", name };
  const w = await watch("durable", `/v1/locks/${name}`);
  await w.first((s) => s.held === false, "free at first");
  const woken = await inObject(lockObject(name), (_o: unknown, state: DurableObjectState) => {
    const o = new LockObject(state, env as never);
    return { o, live: (o as any).watchSockets.liveCount, waiting: (o as any).waitSockets.liveCount };
  });
  // Counted once, as a watch socket: a woken object's wait sockets do not take it for one of theirs (the namespace's cap would count it twice).
  expect(woken).toMatchObject({ live: 1, waiting: 0 });
  // The same state again is not pushed again (the digest kept with the socket); the acquire is.
  await inObject(lockObject(name), () =>
    woken.o.run("mutex", "acquire", [ref, { token: "woken-holder-token", mode: "new", ttlMs: 30_000, requestId: "rq-watch-woken", watch: false }]),
  );
  await w.next((s) => s.held === true, "held, pushed by the woken object", Date.now());
  expect(w.states.map((s) => s.held)).toEqual([false, true]);
  w.ws.close();
});

describe("a watch socket's limits", () => {
  it("refuses a message other than its one watch, and a plain GET of the path", async () => {
    const { get } = api("durable");
    const name = uniqueName("watch-bad");
    // Named as a watch, with the read to make instead: a wait's "POST .../acquire" would take the lock it meant to watch.
    const plain = await get(`/v1/locks/${name}/watch`);
    expect(plain.status).toBe(426);
    expect(plain.body).toMatchObject({
      error: "upgrade_required",
      message: expect.stringMatching(/watch socket: .*GET on the same path without \/watch/),
    });
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
