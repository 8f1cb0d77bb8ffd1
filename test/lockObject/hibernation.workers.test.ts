// A lock object that hibernates while only socket waiters wait: what workerd lets a test show.
// workerd cannot hibernate an object on demand, and aborting one closes its sockets (1006), so
// the wake-up is stood in for by a second LockObject built on the same state, as the runtime
// builds one when a hibernated object gets an event: its constructor must find the waiting
// sockets and put them back in line, in order, with their tokens. (The first instance stays
// alive meanwhile; nothing in these tests lets it act, nor asks it what the woken one changed.)
import { env, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { REGISTRATION_GRACE_MS } from "../../src/limits";
import { LockObject } from "../../src/worker";
import { api, uniqueName } from "../support/workers/api";
import { eventually, lockObject } from "../support/workers/lockObjectHelpers";
import { openWaitSocket, socketWaiter } from "../support/workers/socketWaiter";

it("a socket waiter's long wait is kept by the object's alarm, not a timer that would keep it awake", async () => {
  const { post, get } = api("durable");
  const name = uniqueName("long-wait");
  await post(`/v1/locks/${name}/acquire`, { ttlMs: 120_000 });
  const waitMs = 40_000;
  const before = Date.now();
  const waiter = await socketWaiter(name, { ttlMs: 5000, waitMs });
  await eventually(
    async () => (await get(`/v1/locks/${name}`)).body.waiters,
    (w) => w === 1,
  );
  const alarm = await runInDurableObject(lockObject(name), (_o, state) => state.storage.getAlarm());
  expect(alarm).not.toBeNull();
  // Hibernated, the object is woken at the waiter's deadline: no later (the wait would overrun), and
  // not before it (that is no hibernation: the object would be woken for nothing).
  expect(alarm as number).toBeGreaterThanOrEqual(before + waitMs);
  expect(alarm as number).toBeLessThanOrEqual(before + waitMs + 1000);
  waiter.ws.close();
});

it("woken from hibernation, the object puts its waiting sockets back in line, in order, with their tokens (Durable store)", async () => {
  const { post, get } = api("durable");
  const name = uniqueName("woken");
  const ref = { ns: "tenant-a", name };
  const holder = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 120_000 })).body;
  // Four sockets accepted in one order and put in line in another, which is neither the order
  // they were accepted in nor its reverse: the woken object must go by the line, not by the
  // order the runtime hands its sockets back in.
  const accepted: Record<string, Awaited<ReturnType<typeof openWaitSocket>>> = {};
  for (const label of ["a", "b", "c", "d"]) accepted[label] = await openWaitSocket(name);
  const line = ["d", "b", "c", "a"];
  for (const [i, label] of line.entries()) {
    accepted[label].acquire({ ttlMs: 5000, waitMs: 40_000 });
    await eventually(
      async () => (await get(`/v1/locks/${name}`)).body.waiters,
      (w) => w === i + 1,
    );
  }
  // The release is what happens first on waking (the Durable store's release is an event of this
  // object): it runs before the restored line has said anything to the store, so the store hands
  // the lock to the token it registered before the object slept. Only a line that kept its
  // waiters' tokens matches it at once; one with fresh tokens would wait out that grant.
  let woken!: LockObject;
  const wake = await runInDurableObject(lockObject(name), async (_o, state) => {
    woken = new LockObject(state, env as never);
    const waiters = woken.waiterCount("mutex");
    const releasedAt = Date.now();
    await woken.run("mutex", "release", [ref, { token: holder.token, requestId: "rq-hibernation-test" }]);
    return { waiters, releasedAt };
  });
  expect(wake.waiters).toBe(4);
  /** Which sockets the releases so far handed the lock to (a socket's first message is its grant). */
  const granted = () => Object.keys(accepted).filter((label) => accepted[label].messages.length > 0);
  /** The grant the last release handed to `label`, the only socket granted since: promptly, not after a lease or a grace ran out. */
  const nextGrant = async (label: string, before: string[], releasedAt: number) => {
    const expected = [...before, label].sort();
    expect(await eventually(granted, (g) => g.length === expected.length), "the sockets granted so far").toEqual(expected);
    expect(Date.now() - releasedAt).toBeLessThan(REGISTRATION_GRACE_MS / 2);
    const [answer] = accepted[label].messages;
    expect(answer).toMatchObject({ type: "granted", grant: { name } });
    return answer.grant;
  };
  const first = await nextGrant("d", [], wake.releasedAt);
  // The head was registered before the object slept; the one after it is the woken line's choice.
  const releasedAt = Date.now();
  await runInDurableObject(lockObject(name), () => woken.run("mutex", "release", [ref, { token: first.token, requestId: "rq-hibernation-test-2" }]));
  const second = await nextGrant("b", ["d"], releasedAt);
  // Asked of the woken instance: the first one, which the runtime would have dropped, keeps its own memory of the
  // lock (its KeptKv) and its line, which nothing here moved; the woken line is down to two.
  expect(await runInDurableObject(lockObject(name), () => woken.run("mutex", "inspect", [ref]))).toMatchObject({ held: true, fence: second.fence });
  expect(await runInDurableObject(lockObject(name), () => woken.waiterCount("mutex"))).toBe(2);
  for (const s of Object.values(accepted)) s.ws.close();
});

it("a socket put back in line after waking that leaves before the woken line steps has its registration taken back: the next release frees the lock (Durable store)", async () => {
  const { post, get } = api("durable");
  const name = uniqueName("woken-left");
  const ref = { ns: "tenant-a", name };
  const holder = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 120_000 })).body;
  // Registered in the store behind the holder before the object "sleeps": a release would hand it the lock.
  const waiter = await socketWaiter(name, { ttlMs: 60_000, waitMs: 40_000 });
  await eventually(
    async () => (await get(`/v1/locks/${name}`)).body.waiters,
    (w) => w === 1,
  );
  const after = await runInDurableObject(lockObject(name), async (_o, state) => {
    const woken = new LockObject(state, env as never);
    const [ws] = state.getWebSockets();
    // Its client goes away before the woken line has said anything to the store; then the holder releases.
    woken.webSocketClose(ws);
    await woken.run("mutex", "release", [ref, { token: holder.token, requestId: "rq-woken-left" }]);
    // The store handed the lock to the departed waiter's token: the woken line must take it back.
    return eventually(
      () => woken.run("mutex", "inspect", [ref]) as Promise<{ held: boolean }>,
      (s) => !s.held,
    );
  });
  // Not left held for the departed waiter's 60 s lease.
  expect(after).toMatchObject({ held: false });
  waiter.ws.close();
});
