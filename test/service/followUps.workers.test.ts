import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { env } from "cloudflare:test";
import { PICKUP_MS } from "../../src/limits";
import { unreachableLockObjects } from "../support/workers/unreachableLockObjects";
import { api, sleep, uniqueName } from "../support/workers/api";
import { deliveries, eventually, newReceiver, runAlarmsUntilQuiet } from "../support/workers/lockObjectHelpers";

/**
 * A write the store committed is answered with the store's answer, even when
 * telling the lock object afterwards fails; the object's alarm catches up.
 *
 * The failing lock-object binding is a fake: a Durable Object call that
 * fails on demand cannot be caused for real inside the test runtime. The
 * store (Redis behind the gateway) and the waiting lock object are real.
 */

describe("follow-ups after a committed write (Redis store)", () => {
  const { post, get } = api("redis");
  const broken = api("redis", { LOCK_OBJECT: unreachableLockObjects });
  const path = (name: string, op = "") => `/v1/locks/${name}${op ? `/${op}` : ""}`;

  it("a release is answered 200 though the lock object cannot be told; at the holder's old expiry the object finds its waiter holds the lock", async () => {
    const name = uniqueName("follow-up");
    const holder = (await post(path(name, "acquire"), { ttlMs: 1500 })).body;
    const waiting = post(path(name, "acquire"), { ttlMs: 5000, waitMs: 20_000 });
    await eventually(
      () => get(path(name)),
      (r) => r.body.waiters === 1,
    );

    const released = await broken.post(path(name, "release"), { token: holder.token });
    expect(released.status).toBe(200);
    expect(released.body).toEqual({ released: true, count: 0 });

    // The object never heard of the release. At the holder's old expiry it asks the
    // store again and finds the lock already handed to its waiter.
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.fence).toBeGreaterThan(holder.fence);
    expect(Date.now()).toBeGreaterThanOrEqual(holder.expiresAt - 50);
  });

  it("a grant that reaches the object twice (its own wake-up, then the release's late news) is never taken back", async () => {
    const name = uniqueName("twice");
    const holder = (await post(path(name, "acquire"), { ttlMs: 1500 })).body;
    const first = post(path(name, "acquire"), { ttlMs: 10_000, waitMs: 20_000 });
    await eventually(
      () => get(path(name)),
      (r) => r.body.waiters === 1,
    );
    let secondAnswered = false;
    // Its wait outlasts the window below, so an answer within it could only be a wrong grant.
    const second = post(path(name, "acquire"), { ttlMs: 10_000, waitMs: 8000 }).then((r) => {
      secondAnswered = true;
      return r;
    });
    await eventually(
      () => get(path(name)),
      (r) => r.body.waiters === 2,
    );

    // The release hands the lock to the first waiter; the object does not hear of it...
    const released = await broken.post(path(name, "release"), { token: holder.token });
    expect(released.status).toBe(200);
    // ...finds it at the holder's old expiry, and delivers it.
    const granted = await first;
    expect(granted.status).toBe(200);
    // Now the release's news arrives after all (a retried follow-up that had landed).
    await env.LOCK_OBJECT.get(env.LOCK_OBJECT.idFromName(`mutex:tenant-a:${name}`)).noteWrite("mutex", {
      ref: { ns: "tenant-a", name },
      fence: holder.fence,
      handedTo: granted.body,
    });
    // A window for what must not happen (the object granting the second waiter, or taking the
    // first one's grant back after PICKUP_MS): past the pickup time, with room for a loaded machine.
    await sleep(PICKUP_MS + 1500);
    // The first waiter still holds it; the second was not granted a lock someone holds.
    expect(secondAnswered).toBe(false);
    expect((await get(path(name))).body).toMatchObject({ held: true, fence: granted.body.fence });
    expect((await post(path(name, "heartbeat"), { token: granted.body.token })).status).toBe(200);
    expect((await second).status).toBe(409);
  });

  it("a watched lease released (or a watched start failed) while the lock object cannot be told: no expiry notification", async () => {
    const receiver = await newReceiver();
    const name = uniqueName("quiet-release");
    // TTLs the release and the fail land inside even on a busy machine.
    const held = (await post(path(name, "acquire"), { ttlMs: 1000, onExpire: receiver.url })).body;
    expect((await broken.post(path(name, "release"), { token: held.token })).status).toBe(200);

    const key = uniqueName("quiet-fail");
    const begun = (await post(`/v1/idempotency/${key}/begin`, { ttlMs: 1000, onExpire: receiver.url })).body;
    expect((await broken.post(`/v1/idempotency/${key}/fail`, { token: begun.token })).status).toBe(200);

    // The objects still watch both; at the leases' ends they ask the store, which remembers.
    await sleep(Math.max(0, held.expiresAt - Date.now(), begun.expiresAt - Date.now()) + 100);
    await runAlarmsUntilQuiet(name, "mutex");
    await runAlarmsUntilQuiet(key, "idempotency");
    expect(await deliveries(receiver.id)).toEqual([]);
  });

  it("a delivered grant whose confirmation cannot reach the lock object is marked picked up in the store, and kept", async () => {
    // The waiter's Worker reaches its lock object for everything but the confirmation (a fake, as above).
    const noConfirm = {
      idFromName: (n: string) => env.LOCK_OBJECT.idFromName(n),
      get: (id: DurableObjectId) => {
        const real = env.LOCK_OBJECT.get(id) as unknown as Record<string | symbol, unknown>;
        return new Proxy(real, {
          get: (target, prop) =>
            prop === "pickedUp"
              ? () => Promise.reject(new Error("lock object unreachable for the confirmation (test fake)"))
              : typeof target[prop] === "function"
                ? (target[prop] as (...a: unknown[]) => unknown).bind(target)
                : target[prop],
        });
      },
    } as unknown as Env["LOCK_OBJECT"];
    const waiterApi = api("redis", { LOCK_OBJECT: noConfirm });
    const name = uniqueName("no-confirm");
    const holder = (await post(path(name, "acquire"), { ttlMs: 30_000 })).body;
    const waiting = waiterApi.post(path(name, "acquire"), { ttlMs: 30_000, waitMs: 20_000 });
    await eventually(
      () => get(path(name)),
      (r) => r.body.waiters === 1,
    );
    let nextAnswered = false;
    const next = post(path(name, "acquire"), { ttlMs: 30_000, waitMs: PICKUP_MS + 1500 }).then((r) => {
      nextAnswered = true;
      return r;
    });
    await eventually(
      () => get(path(name)),
      (r) => r.body.waiters === 2,
    );

    await post(path(name, "release"), { token: holder.token });
    const granted = await waiting;
    expect(granted.status).toBe(200);
    await sleep(PICKUP_MS + 500);
    // Not taken back: the holder that got its answer keeps the lock; the next waiter still waits.
    expect(nextAnswered).toBe(false);
    expect((await get(path(name))).body).toMatchObject({ held: true, fence: granted.body.fence });
    expect((await next).status).toBe(409);
  });
});
