// A lock object that hibernates while only socket waiters wait: what workerd lets a test show.
// workerd cannot hibernate an object on demand, and aborting one closes its sockets (1006), so
// the wake-up is stood in for by a second LockObject built on the same state, as the runtime
// builds one when a hibernated object gets an event: its constructor must find the waiting
// sockets and put them back in line, in order, with their tokens. (The first instance stays
// alive meanwhile; nothing in these tests lets it act.)
import { env, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { LockObject } from "../../src/lockObject/LockObject";
import { api, uniqueName } from "./support/api";
import { eventually, lockObject } from "./support/lockObjectHelpers";
import { socketWaiter } from "./support/socketWaiter";

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
  // Hibernated, the object is woken no later than the waiter's deadline.
  expect(alarm as number).toBeLessThanOrEqual(before + waitMs + 1000);
  waiter.ws.close();
});

it("woken from hibernation, the object puts its waiting sockets back in line, in order, with their tokens (Durable store)", async () => {
  const { post, get } = api("durable");
  const name = uniqueName("woken");
  const holder = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 120_000 })).body;
  const first = await socketWaiter(name, { ttlMs: 5000, waitMs: 40_000 });
  await eventually(
    async () => (await get(`/v1/locks/${name}`)).body.waiters,
    (w) => w === 1,
  );
  const second = await socketWaiter(name, { ttlMs: 5000, waitMs: 40_000 });
  await eventually(
    async () => (await get(`/v1/locks/${name}`)).body.waiters,
    (w) => w === 2,
  );
  const woken = await runInDurableObject(lockObject(name), async (_o, state) => {
    const fresh = new LockObject(state, env as never);
    const waiters = fresh.waiterCount("mutex");
    // The holder releases on the woken instance: the lock goes to the first socket that waited.
    await fresh.run("mutex", "release", [
      { ns: "tenant-a", name },
      { token: holder.token, requestId: "rq-hibernation-test" },
    ]);
    return waiters;
  });
  expect(woken).toBe(2);
  await eventually(
    async () => first.messages.length,
    (n) => n > 0,
  );
  expect(first.messages[0]).toMatchObject({ type: "granted", grant: { name } });
  expect(second.messages).toEqual([]);
  expect((await get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, fence: first.messages[0].grant.fence });
  first.ws.close();
  second.ws.close();
});
