// On the Redis store the Worker tells a lock object of its writes only while the lock has watchers: the
// object keeps the lock's watchers key (lua/FIELDS.md) while it has watch sockets, and the Worker's scripts
// answer whether it exists (src/store/redis/changeNotes.ts, src/lockObject/sockets/watchMarker.ts). That watchers are
// still pushed every change is test/lockObject/sockets/watch.workers.test.ts (its Redis cases).
import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { createUpstashClient } from "../../../src/store/redis/createUpstashClient";
import { mutexKeys } from "../../../src/kinds/mutex/keys";
import { WATCHERS_KEY_MS } from "../../../src/lockObject/sockets/watchMarker";
import worker, { LockObject } from "../../../src/worker";
import { api, envFor, KEY_A, uniqueName } from "../../support/workers/api";
import { eventually, lockObject, newReceiver } from "../../support/workers/lockObjectHelpers";

/** runInDurableObject, untyped: its inference on these stubs runs too deep for the compiler. */
const inObject = runInDurableObject as unknown as (stub: unknown, fn: (o: any, state: DurableObjectState) => unknown) => Promise<any>;

const redis = createUpstashClient(env.TEST_UPSTASH_URL as string, env.TEST_UPSTASH_TOKEN as string, 5000);
const watchersKey = (name: string) => mutexKeys.watchers(mutexKeys.lock({ ns: "tenant-a", name }));

/**
 * The lock objects' noteChange calls, counted as they arrive (the method runs as it is): the RPC the
 * Worker makes after a write it tells of.
 */
const noteChanges: string[] = [];
const proto = LockObject.prototype as unknown as { noteChange(this: any, kind: string): void };
const original = proto.noteChange;
proto.noteChange = function (this: any, kind: string) {
  noteChanges.push(`${kind}:${this.ctx.id.toString()}`);
  return original.call(this, kind);
};
const callsTo = (name: string) => noteChanges.filter((c) => c === `mutex:${lockObject(name).id.toString()}`).length;
afterEach(() => {
  noteChanges.length = 0;
});

/** A watch socket of tenant-a on a mutex (Redis store), once its first state came. */
async function watching(name: string): Promise<WebSocket> {
  const res = await worker.fetch(
    new Request(`http://holdfast.test/v1/locks/${name}/watch`, { headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` } }),
    envFor("redis"),
    createExecutionContext(),
  );
  expect(res.status).toBe(101);
  const ws = res.webSocket as WebSocket;
  ws.accept();
  const first = new Promise((resolve) => ws.addEventListener("message", resolve, { once: true }));
  ws.send(JSON.stringify({ type: "watch" }));
  await first;
  return ws;
}

describe("the Worker's change notes on the Redis store", () => {
  const { post } = api("redis");

  it("with nobody watching, an uncontended acquire and release make no call into the lock object; with a watcher, they do", async () => {
    const name = uniqueName("unwatched-cycle");
    const held = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
    expect((await post(`/v1/locks/${name}/release`, { token: held.token })).status).toBe(200);
    // api() waits for the request's follow-ups (waitOnExecutionContext): a note would have arrived by now.
    expect(callsTo(name)).toBe(0);

    const ws = await watching(name);
    const again = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
    await post(`/v1/locks/${name}/release`, { token: again.token });
    expect(callsTo(name)).toBe(2);
    ws.close();
  });

  it("a release its service already tells the object of (a watched lease's) is not told again, and still pushed", async () => {
    const name = uniqueName("told-once");
    const ws = await watching(name);
    const states: Array<{ held: boolean }> = [];
    ws.addEventListener("message", (e) => {
      states.push(JSON.parse(String(e.data)).state);
    });
    const receiver = await newReceiver();
    // With onExpire the acquire runs in the lock object (which sees it); the release's answer says watched: noteWrite.
    const held = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000, onExpire: receiver.url })).body;
    await eventually(
      () => states.some((s) => s.held),
      (seen) => seen,
    );
    expect((await post(`/v1/locks/${name}/release`, { token: held.token })).status).toBe(200);
    await eventually(
      () => states.at(-1)?.held,
      (h) => h === false,
    );
    expect(callsTo(name)).toBe(0);
    ws.close();
  });

  it("the lock's watchers key lives while it has a watcher, for a bounded time, and goes when the last leaves", async () => {
    const name = uniqueName("watchers-key");
    const first = await watching(name);
    const second = await watching(name);
    const ttl = await redis.pttl(watchersKey(name));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(WATCHERS_KEY_MS);
    first.close();
    await eventually(
      () => inObject(lockObject(name), (o) => o.watchSockets.liveCount as number),
      (n) => n === 1,
    );
    expect(await redis.exists(watchersKey(name))).toBe(1);
    second.close();
    await eventually(
      () => redis.exists(watchersKey(name)),
      (n) => n === 0,
    );
  });

  // Woken from hibernation: stood in for by a second LockObject on the same state (see test/lockObject/hibernation.workers.test.ts).
  it("a woken object with watchers sets the key again", async () => {
    const name = uniqueName("watchers-woken");
    const ws = await watching(name);
    await redis.del(watchersKey(name)); // as if it had lapsed while the object slept
    await inObject(lockObject(name), (_o, state) => new LockObject(state, env as never));
    await eventually(
      () => redis.exists(watchersKey(name)),
      (n) => n === 1,
    );
    ws.close();
  });
});
