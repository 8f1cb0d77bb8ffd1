import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { namespaceKey, verifyNotification } from "../../../src/wire/signature.js";
import { sleep, type StoreKind, uniqueName } from "../../support/workers/api.js";
import { lockApi } from "./lockApi.js";
import { deliveries, eventually, fireObjectAlarm, newReceiver, objectAlarm, runAlarmsUntilQuiet } from "../../support/workers/lockObjectHelpers.js";

/** Waiting in the lock object's line and expiry notifications, the same on both stores. */
export function waitingConformance(kind: StoreKind) {
  const { post, get, path, waiters, untilWaiters } = lockApi(kind);

  it("serves waiters first-come, first-served, each woken by the previous release", async () => {
    const name = uniqueName("fifo");
    const holder = (await post(path(name, "acquire"), { ttlMs: 10_000 })).body;
    const order: number[] = [];
    const pending = [];
    for (let i = 0; i < 4; i++) {
      pending.push(
        post(path(name, "acquire"), { ttlMs: 10_000, waitMs: 20_000 }).then((r) => {
          order.push(i);
          return r;
        }),
      );
      await untilWaiters(name, i + 1);
    }
    let token = holder.token;
    const fences = [holder.fence];
    for (let i = 0; i < 4; i++) {
      await post(path(name, "release"), { token });
      const granted = await pending[i];
      expect(granted.status).toBe(200);
      fences.push(granted.body.fence);
      token = granted.body.token;
    }
    expect(order).toEqual([0, 1, 2, 3]);
    for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
    expect(await waiters(name)).toBe(0);
  });

  it("a release wakes the head waiter at once", async () => {
    const name = uniqueName("wake-release");
    const holder = (await post(path(name, "acquire"), { ttlMs: 30_000 })).body;
    const waiting = post(path(name, "acquire"), { ttlMs: 5000, waitMs: 30_000 });
    await untilWaiters(name, 1);
    const released = Date.now();
    await post(path(name, "release"), { token: holder.token });
    const res = await waiting;
    expect(res.status).toBe(200);
    // Woken by the release, long before the holder's 30 s lease or the 30 s wait would end.
    expect(Date.now() - released).toBeLessThan(5000);
  });

  it("a waiter wakes by itself when the holder's lease lapses, not before: a heartbeat keeps it waiting", async () => {
    const name = uniqueName("wake-expiry");
    const holder = (await post(path(name, "acquire"), { ttlMs: 1500 })).body;
    let grantedAt = 0;
    const waiting = post(path(name, "acquire"), { ttlMs: 5000, waitMs: 20_000 }).then((r) => {
      grantedAt = Date.now();
      return r;
    });
    await untilWaiters(name, 1);

    // The holder heartbeats (straight to the store): at the old expiry the object finds the lease moved.
    const moved = (await post(path(name, "heartbeat"), { token: holder.token, ttlMs: 3000 })).body;
    expect(moved.expiresAt).toBeGreaterThan(holder.expiresAt + 1000);
    await sleep(Math.max(0, holder.expiresAt - Date.now()) + 300);
    expect((await get(path(name))).body).toMatchObject({ held: true, fence: holder.fence, waiters: 1 });

    // The holder vanishes: no release. At its new expiry the object wakes the waiter, no polling by anyone.
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.fence).toBeGreaterThan(holder.fence);
    expect(grantedAt).toBeGreaterThanOrEqual(moved.expiresAt - 50);
    expect(grantedAt - moved.expiresAt).toBeLessThan(1000);
  });

  it("a waiter whose waitMs runs out gets 409 locked and leaves the queue", async () => {
    const name = uniqueName("timeout");
    await post(path(name, "acquire"), { ttlMs: 10_000 });
    const res = await post(path(name, "acquire"), { ttlMs: 5000, waitMs: 400 });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("locked");
    expect(res.body.retryAfterMs).toBeGreaterThan(0);
    expect(res.body.retryAfterMs).toBeLessThanOrEqual(10_000);
    expect(await waiters(name)).toBe(0);
  });

  it("a waiter that disconnects leaves the queue and the lock goes to the next one", async () => {
    const name = uniqueName("disconnect");
    const holder = (await post(path(name, "acquire"), { ttlMs: 10_000 })).body;
    const gone = new AbortController();
    const first = post(path(name, "acquire"), { ttlMs: 5000, waitMs: 20_000 }, { signal: gone.signal }).catch((e) => e);
    await untilWaiters(name, 1);
    const second = post(path(name, "acquire"), { ttlMs: 5000, waitMs: 20_000 });
    await untilWaiters(name, 2);
    gone.abort();
    await first;
    expect(await untilWaiters(name, 1)).toBe(1);
    await post(path(name, "release"), { token: holder.token });
    const res = await second;
    expect(res.status).toBe(200);
    expect((await get(path(name))).body).toMatchObject({ held: true, fence: res.body.fence, waiters: 0 });
  });

  it("many clients looping acquire -> read-modify-write -> release never overlap and lose no update", async () => {
    const name = uniqueName("contention");
    let shared = 0;
    let inside = 0;
    let maxInside = 0;
    const grantOrder: number[] = [];
    const client = async () => {
      for (let i = 0; i < 4; i++) {
        const g = await post(path(name, "acquire"), { ttlMs: 10_000, waitMs: 30_000 });
        expect(g.status).toBe(200);
        grantOrder.push(g.body.fence);
        inside += 1;
        maxInside = Math.max(maxInside, inside);
        const read = shared; // deliberately not atomic: only the lock keeps updates apart
        await sleep(Math.random() * 5);
        shared = read + 1;
        inside -= 1;
        expect((await post(path(name, "release"), { token: g.body.token })).status).toBe(200);
      }
    };
    await Promise.all(Array.from({ length: 6 }, client));
    expect(shared).toBe(24);
    expect(maxInside).toBe(1);
    for (let i = 1; i < grantOrder.length; i++) expect(grantOrder[i]).toBeGreaterThan(grantOrder[i - 1]);
  });

  it("posts a signed expiry notification when a holder vanishes", async () => {
    const name = uniqueName("notify");
    const receiver = await newReceiver();
    // 1 s: the alarm is read before the lease ends (and the runtime runs it), on a loaded runner too.
    const holder = (await post(path(name, "acquire"), { ttlMs: 1000, onExpire: receiver.url })).body;
    expect(Math.abs(((await objectAlarm(name)) ?? 0) - holder.expiresAt)).toBeLessThan(250);
    // The alarm sees the lapse, then delivers after the notification grace. The runtime may
    // run either alarm itself before the test does (a busy machine): both paths end here.
    await runAlarmsUntilQuiet(name, "mutex");
    const got = await eventually(
      () => deliveries(receiver.id),
      (d) => d.length > 0,
    );
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0].body)).toEqual({ kind: "mutex", namespace: "tenant-a", name, fence: holder.fence, expiredAt: holder.expiresAt });
    expect(got[0].signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v2=[0-9a-f]{64}$/);
    expect(
      await verifyNotification({ body: got[0].body, signature: got[0].signature, key: await namespaceKey(env.WEBHOOK_SECRET!, "tenant-a") }),
    ).not.toBeNull();
    // Another namespace's key (or the raw secret) does not verify it: tenants cannot forge each other's.
    expect(
      await verifyNotification({ body: got[0].body, signature: got[0].signature, key: await namespaceKey(env.WEBHOOK_SECRET!, "tenant-b") }),
    ).toBeNull();
    expect(await verifyNotification({ body: got[0].body, signature: got[0].signature, key: env.WEBHOOK_SECRET! })).toBeNull();
    // A captured delivery replayed with a fresh t fails v2 (t is inside the MAC); an old t fails the tolerance.
    const key = await namespaceKey(env.WEBHOOK_SECRET!, "tenant-a");
    const replayed = got[0].signature?.replace(/^t=\d+/, `t=${Date.now()}`);
    expect(await verifyNotification({ body: got[0].body, signature: replayed, key })).toBeNull();
    expect(await verifyNotification({ body: got[0].body, signature: got[0].signature, key, now: Date.now() + 10 * 60_000 })).toBeNull();
    // The key a tenant reads from the service verifies its own notifications.
    const served = await get("/v1/notifications/key");
    expect(served.body).toMatchObject({ namespace: "tenant-a", key, header: "x-lock-signature" });
  });

  it("a lock object that already woke for a waiter wakes at a later holder's watch too", async () => {
    const name = uniqueName("notify-later");
    const first = (await post(path(name, "acquire"), { ttlMs: 60_000 })).body;
    // A waiter's long wait puts the object's alarm at the wait's end: the object has looked at its watches (none).
    const waiting = post(path(name, "acquire"), { ttlMs: 5000, waitMs: 30_000 });
    await untilWaiters(name, 1);
    await post(path(name, "release"), { token: first.token });
    const second = (await waiting).body;
    expect((await post(path(name, "release"), { token: second.token })).status).toBe(200);
    const receiver = await newReceiver();
    const watched = (await post(path(name, "acquire"), { ttlMs: 1000, onExpire: receiver.url })).body;
    expect(Math.abs(((await objectAlarm(name)) ?? 0) - watched.expiresAt)).toBeLessThan(250);
    await runAlarmsUntilQuiet(name, "mutex");
    await eventually(
      () => deliveries(receiver.id),
      (d) => d.length === 1,
    );
  });

  it("sends nothing for a lease that was released", async () => {
    const name = uniqueName("no-notify");
    const receiver = await newReceiver();
    // Released well inside its TTL, even on a busy machine; the lease's TTL and the grace after it then pass.
    const holder = (await post(path(name, "acquire"), { ttlMs: 1000, onExpire: receiver.url })).body;
    expect((await post(path(name, "release"), { token: holder.token })).body.released).toBe(true);
    await sleep(Math.max(0, holder.expiresAt - Date.now()) + 100);
    await fireObjectAlarm(name);
    await sleep(1100);
    await fireObjectAlarm(name);
    expect(await deliveries(receiver.id)).toHaveLength(0);
  });

  it("retries a failing receiver with backoff until it accepts", async () => {
    const name = uniqueName("retry");
    const receiver = await newReceiver(2);
    expect((await post(path(name, "acquire"), { ttlMs: 200, onExpire: receiver.url })).status).toBe(200);
    // The alarm sees the lapse, then delivers and retries at its backoff. Each is run when
    // due; the runtime may run one itself first (a busy machine), so wait for the deliveries.
    const until = Date.now() + 10_000;
    let got = await deliveries(receiver.id);
    while (got.length < 3 && Date.now() < until) {
      const next = await objectAlarm(name);
      if (next === null) await sleep(50);
      else {
        await sleep(Math.max(0, next - Date.now()) + 20);
        await fireObjectAlarm(name);
      }
      got = await deliveries(receiver.id);
    }
    expect(got.map((d) => d.answered)).toEqual([500, 500, 200]);
    expect(new Set(got.map((d) => d.body)).size).toBe(1);
    expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(400); // backed off, not hammered
    // Nothing more to deliver: no alarm soon (the Durable store keeps only its fence, for days).
    const next = await objectAlarm(name);
    expect(next === null || next > Date.now() + 60_000).toBe(true);
  });

  it("notifies when an idempotency key's owner vanishes, and not when it completes or fails", async () => {
    const receiver = await newReceiver();
    const begin = (key: string, ttlMs: number) => post(`/v1/idempotency/${key}/begin`, { ttlMs, onExpire: receiver.url });

    // The owners that complete and fail have a TTL that their complete and fail land inside even on a busy
    // machine (one that came late would have vanished too); every TTL has passed before the alarms run.
    const vanished = uniqueName("idem-vanish");
    const started = (await begin(vanished, 300)).body;
    const completed = uniqueName("idem-done");
    const done = (await begin(completed, 1000)).body;
    expect((await post(`/v1/idempotency/${completed}/complete`, { token: done.token, response: { ok: true } })).status).toBe(200);
    const failed = uniqueName("idem-fail");
    const gaveUp = (await begin(failed, 1000)).body;
    expect((await post(`/v1/idempotency/${failed}/fail`, { token: gaveUp.token })).status).toBe(200);

    await sleep(Math.max(0, started.expiresAt - Date.now(), done.expiresAt - Date.now(), gaveUp.expiresAt - Date.now()) + 100);
    for (const key of [vanished, completed, failed]) await runAlarmsUntilQuiet(key, "idempotency");
    const got = await deliveries(receiver.id);
    expect(got.map((d) => JSON.parse(d.body))).toEqual([
      { kind: "idempotency", namespace: "tenant-a", name: vanished, fence: started.fence, expiredAt: expect.any(Number) },
    ]);
    expect(
      await verifyNotification({ body: got[0].body, signature: got[0].signature, key: await namespaceKey(env.WEBHOOK_SECRET!, "tenant-a") }),
    ).not.toBeNull();
  });
}
