import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { PICKUP_MS, REGISTRATION_GRACE_MS } from "../../../src/limits.js";
import { api, type StoreKind, uniqueName } from "../../support/workers/api.js";
import { lockApi } from "./lockApi.js";
import { eventually, lockObject, newReceiver } from "../../support/workers/lockObjectHelpers.js";

/**
 * The lock object's line, the same on both stores: nobody goes ahead of it,
 * it keeps arrival order, and a waiter that is gone (it never takes its
 * grant, or its object restarts) holds the lock no longer than the bounds
 * in docs/API.md.
 */
export function queueConformance(kind: StoreKind) {
  const { post, get, path, untilWaiters } = lockApi(kind);

  it("no barging: while someone waits, a try-lock is refused, also right after the release", async () => {
    const name = uniqueName("no-barging");
    const holder = (await post(path(name, "acquire"), { ttlMs: 10_000 })).body;
    const waiting = post(path(name, "acquire"), { ttlMs: 10_000, waitMs: 20_000 });
    await untilWaiters(name, 1);
    const early = await post(path(name, "acquire"), { ttlMs: 10_000 });
    expect(early.status).toBe(409);
    expect((await post(path(name, "release"), { token: holder.token })).status).toBe(200);
    const late = await post(path(name, "acquire"), { ttlMs: 10_000 });
    expect(late.status).toBe(409);
    const granted = await waiting;
    expect(granted.status).toBe(200);
    expect((await get(path(name))).body).toMatchObject({ held: true, fence: granted.body.fence });
  });

  it("a re-entry goes ahead of the line: with onExpire (through the lock object) it is granted at once while someone waits", async () => {
    const name = uniqueName("reenter-past-line");
    const receiver = await newReceiver();
    const holder = (await post(path(name, "acquire"), { ttlMs: 10_000 })).body;
    const waiting = post(path(name, "acquire"), { ttlMs: 10_000, waitMs: 20_000 });
    await untilWaiters(name, 1);
    // A held token is a re-entry (the lock object's rule, whatever the kind): tried at once, never refused for the line.
    const again = await post(path(name, "acquire"), { ttlMs: 10_000, token: holder.token, onExpire: receiver.url });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ count: 2, fence: holder.fence });
    await post(path(name, "release"), { token: holder.token });
    await post(path(name, "release"), { token: holder.token });
    expect((await waiting).status).toBe(200);
  });

  it("once the line is empty, try-locks are not held back: within the registration grace (5 s) at most", async () => {
    const name = uniqueName("line-empties");
    const holder = (await post(path(name, "acquire"), { ttlMs: 30_000 })).body;
    const first = post(path(name, "acquire"), { ttlMs: 30_000, waitMs: 20_000 });
    await untilWaiters(name, 1);
    const second = post(path(name, "acquire"), { ttlMs: 30_000, waitMs: 400 }); // gives up before the release
    await untilWaiters(name, 2);
    expect((await second).status).toBe(409);
    await post(path(name, "release"), { token: holder.token });
    const granted = (await first).body;
    await post(path(name, "release"), { token: granted.token });
    const started = Date.now();
    const tryLock = await eventually(
      () => post(path(name, "acquire"), { ttlMs: 1000 }),
      (r) => r.status === 200,
      8000,
    );
    expect(tryLock.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(REGISTRATION_GRACE_MS + 1000);
  });

  it("a burst of 50 waiters is granted strictly in arrival order", async () => {
    const name = uniqueName("burst");
    const holder = (await post(path(name, "acquire"), { ttlMs: 30_000 })).body;
    const order: number[] = [];
    const pending: Array<Promise<void>> = [];
    for (let i = 0; i < 50; i++) {
      pending.push(
        post(path(name, "acquire"), { ttlMs: 30_000, waitMs: 60_000 }).then(async (r) => {
          expect(r.status).toBe(200);
          order.push(i);
          expect((await post(path(name, "release"), { token: r.body.token })).status).toBe(200);
        }),
      );
      await untilWaiters(name, i + 1); // arrival order is the order the object saw them
    }
    await post(path(name, "release"), { token: holder.token });
    await Promise.all(pending);
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
  }, 60_000);

  it(`a grant whose answer is never taken is taken back after the pickup time (${PICKUP_MS} ms), and the next waiter gets the lock`, async () => {
    const name = uniqueName("unread");
    const holder = (await post(path(name, "acquire"), { ttlMs: 30_000 })).body;
    // This client asks, then never reads its answer: like one whose connection is gone.
    const ghost = api(kind).raw("POST", path(name, "acquire"), { ttlMs: 30_000, waitMs: 30_000 });
    await untilWaiters(name, 1);
    const live = post(path(name, "acquire"), { ttlMs: 30_000, waitMs: 30_000 });
    await untilWaiters(name, 2);
    // The stopwatch starts before the release is sent, so before the pickup timer (which the handoff starts,
    // on the Durable store before the release's own answer is on its way): the time it measures is never short.
    const handedAt = Date.now();
    await post(path(name, "release"), { token: holder.token });
    const ghostGrant = await eventually(
      () => get(path(name)),
      (r) => r.body.held && r.body.fence !== holder.fence,
    );
    expect(ghostGrant.body.ttlMs).toBeGreaterThan(20_000); // handed over with its full lease...
    // ...but taken back at the pickup time, and the next waiter granted.
    const res = await live;
    expect(res.status).toBe(200);
    expect(Date.now() - handedAt).toBeGreaterThanOrEqual(PICKUP_MS - 10);
    expect(Date.now() - handedAt).toBeLessThan(PICKUP_MS + 1000);
    expect(res.body.fence).toBeGreaterThan(ghostGrant.body.fence);
    void ghost; // never read
  });

  it("a waiter whose wait runs out while the line's store step grants it holds nothing: the grant is taken back", async () => {
    const name = uniqueName("left-during-step");
    const receiver = await newReceiver();
    // onExpire sends even a free lock's acquire through the lock object's line, as its first (fresh) waiter;
    // a 1 ms wait runs out while the store step that grants it is under way (on Redis, a round trip).
    const res = await post(path(name, "acquire"), { ttlMs: 30_000, waitMs: 1, onExpire: receiver.url });
    if (res.status === 200) {
      // Granted in time (the Durable store's step runs in memory): then it holds, as answered, and its token releases it.
      expect((await get(path(name))).body).toMatchObject({ held: true, fence: res.body.fence });
      expect((await post(path(name, "release"), { token: res.body.token })).body).toEqual({ released: true, count: 0 });
      return;
    }
    expect(res.status).toBe(409);
    // Nobody knows that grant's token: the lock must be free again at once, not after 30 s.
    expect(
      (
        await eventually(
          () => get(path(name)),
          (r) => r.body.held === false,
          3000,
        )
      ).body.held,
    ).toBe(false);
    // Usable again: a waiting acquire gets it (a try-lock may still be held back by the registration grace).
    expect((await post(path(name, "acquire"), { ttlMs: 1000, waitMs: 2000 })).status).toBe(200);
  });

  it("a waiting acquire granted on arrival (it never waited) needs no pickup: it keeps its lease", async () => {
    const name = uniqueName("on-arrival");
    // Its answer is never read: had it waited, the grant would be taken back after the pickup time.
    void api(kind).raw("POST", path(name, "acquire"), { ttlMs: 30_000, waitMs: 10_000 });
    const held = await eventually(
      () => get(path(name)),
      (r) => r.body.held === true,
    );
    await new Promise((r) => setTimeout(r, PICKUP_MS + 500));
    expect((await get(path(name))).body).toMatchObject({ held: true, fence: held.body.fence });
  });

  it("a grant from the line whose answer was read whole keeps its lease past the pickup time: the Worker confirms its delivery", async () => {
    const name = uniqueName("delivered");
    const holder = (await post(path(name, "acquire"), { ttlMs: 30_000 })).body;
    const waiting = post(path(name, "acquire"), { ttlMs: 30_000, waitMs: 30_000 });
    await untilWaiters(name, 1);
    await post(path(name, "release"), { token: holder.token });
    const grant = (await waiting).body;
    expect(grant.fence).toBeGreaterThan(holder.fence);
    // No heartbeat comes: unconfirmed, the grant would be taken back at the pickup time.
    await new Promise((r) => setTimeout(r, PICKUP_MS + 500));
    expect((await get(path(name))).body).toMatchObject({ held: true, fence: grant.fence });
    expect((await post(path(name, "release"), { token: grant.token })).status).toBe(200);
  });

  it("a wait the Worker withdraws (its client hung up) leaves the line at once, though no abort reached the object", async () => {
    const name = uniqueName("withdrawn");
    const holder = (await post(path(name, "acquire"), { ttlMs: 10_000 })).body;
    // The Worker's request to the object, as acquireFlow sends it, with no signal: only withdraw() can end it.
    const waiterId = crypto.randomUUID();
    // Its ttlMs is longer than the case waits: only a take-back, never a lapse, frees a lock it was handed.
    const request = { kind: "mutex", store: kind, ref: { ns: "tenant-a", name }, ttlMs: 60_000, waitMs: 20_000, waiterId };
    const stub = lockObject(name);
    const answer = stub.fetch("https://lock-object/wait", { method: "POST", body: JSON.stringify(request) }).then((r) => r.json());
    await untilWaiters(name, 1);
    await stub.withdraw(waiterId);
    expect(await answer).toMatchObject({ status: "locked" });
    expect(await untilWaiters(name, 0)).toBe(0);
    expect((await post(path(name, "release"), { token: holder.token })).status).toBe(200);
    // The store forgets the waiter one store step after it left the line (withdraw, queued behind its admission if that
    // was still on its way): a release in between hands it the lock, which the object takes back at once (nobody has
    // its token; docs/API.md). Under load that step came after the release, so the lock is free once it has run.
    await eventually(
      () => get(path(name)),
      (r) => r.body.held === false && r.body.waiters === 0,
    );
  });

  it("the lock object restarting while clients wait: they get 503, can wait again, and no lock outlives its TTL", async () => {
    const name = uniqueName("restart");
    const holder = (await post(path(name, "acquire"), { ttlMs: 1000 })).body;
    const first = post(path(name, "acquire"), { ttlMs: 1000, waitMs: 20_000 });
    await untilWaiters(name, 1);
    await runInDurableObject(lockObject(name), (_o, state) => state.abort("restarted by the test")).catch(() => undefined);
    const lost = await first;
    expect(lost.status).toBe(503);
    expect(lost.body).toMatchObject({ error: "store_unavailable", outcome: "unknown" });
    // The holder's lease (1 s) and any grant made to the vanished waiter (its 1 s ttl) run out;
    // a client that waits again gets the lock.
    const again = await post(path(name, "acquire"), { ttlMs: 5000, waitMs: 10_000 });
    expect(again.status).toBe(200);
    expect(again.body.fence).toBeGreaterThan(holder.fence);
  });

  it("a waiter registered by a line the object lost does not outlive the lease it waited behind, however long the holder heartbeats", async () => {
    const name = uniqueName("lost-line-hb");
    const holder = (await post(path(name, "acquire"), { ttlMs: 1000 })).body;
    let beating = true;
    // Once the waiter is registered behind the 1 s lease, the holder beats for 5 s at a time: the registration
    // must still end by its own lease's grace, and a loaded runner's pause before the release cannot lapse the holder.
    let ttlMs = 1000;
    const beats = (async () => {
      while (beating) {
        expect((await post(path(name, "heartbeat"), { token: holder.token, ttlMs })).status).toBe(200);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const waiter = post(path(name, "acquire"), { ttlMs: 30_000, waitMs: 20_000 });
    await untilWaiters(name, 1);
    ttlMs = 5000;
    await runInDurableObject(lockObject(name), (_o, state) => state.abort("restarted by the test")).catch(() => undefined);
    expect((await waiter).status).toBe(503);
    // Past the registration's grace after the lease it was made behind, while the holder stays alive.
    await new Promise((r) => setTimeout(r, 1000 + REGISTRATION_GRACE_MS + 500));
    beating = false;
    await beats;
    expect((await post(path(name, "release"), { token: holder.token })).body).toEqual({ released: true, count: 0 });
    // Nobody is handed the lock: the next try-lock gets it (not after the vanished waiter's 30 s).
    const next = await eventually(
      () => post(path(name, "acquire"), { ttlMs: 1000 }),
      (r) => r.status === 200,
      3000,
    );
    expect(next.status).toBe(200);
  });

  it("a stored fence at 2^53 or past it is a 500, never a grant whose fence did not go up, and it is left as it was", async () => {
    const name = uniqueName("fence-max");
    // Past 2^53 a double cannot tell a fence from the next one: 2^53 + 1 would be answered as 2^53 again.
    const stored = "9007199254740993";
    const { env } = api(kind);
    const redis = (command: string[]) =>
      fetch(env.UPSTASH_REDIS_REST_URL!, {
        method: "POST",
        headers: { authorization: `Bearer ${env.UPSTASH_REDIS_REST_TOKEN}` },
        body: JSON.stringify(command),
      }).then((r) => r.json() as Promise<{ result: unknown }>);
    // The mutex's hash keeps its last fence (lua/FIELDS.md).
    if (kind === "redis") await redis(["HSET", `hf:{mx:tenant-a:${name}}`, "fence", stored]);
    else {
      await runInDurableObject(lockObject(name), (_o, state) =>
        state.storage.kv.put("mutex:fence", { last: 2 ** 53, keepUntil: Date.now() + 600_000 }),
      );
    }
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await post(path(name, "acquire"), { ttlMs: 5000 });
      expect(res.status).toBe(500);
      expect(res.body.error).toBe("internal");
    }
    expect((await get(path(name))).body).toMatchObject({ held: false });
    if (kind === "redis") expect((await redis(["HGETALL", `hf:{mx:tenant-a:${name}}`])).result).toEqual(["fence", stored]);
    else {
      const kept = await runInDurableObject(lockObject(name), (_o, state) => state.storage.kv.get<{ last: number }>("mutex:fence"));
      expect(kept?.last).toBe(2 ** 53);
    }
  });

  it("a bug is a 500 with an error id, never a 503: the lock's key holds something our scripts did not write", async () => {
    const name = uniqueName("bug");
    const { env } = api(kind);
    const redisCommand = (command: string[]) =>
      fetch(env.UPSTASH_REDIS_REST_URL!, {
        method: "POST",
        headers: { authorization: `Bearer ${env.UPSTASH_REDIS_REST_TOKEN}` },
        body: JSON.stringify(command),
      });
    if (kind === "redis") {
      // A real Redis error (WRONGTYPE) from a key of the wrong type.
      expect((await redisCommand(["SET", `hf:{mx:tenant-a:${name}}`, "not-a-hash"])).status).toBe(200);
    } else {
      await runInDurableObject(lockObject(name), (_o, state) => state.storage.kv.put("mutex", "not-a-lease"));
    }
    try {
      const res = await post(path(name, "acquire"), { ttlMs: 1000 });
      expect(res.status).toBe(500);
      expect(res.body.error).toBe("internal");
      expect(res.body.errorId).toMatch(/^err_/);
      expect(res.body.message).toContain(res.body.errorId);
    } finally {
      // The broken record goes with the case: tenant-a's listing (the console's cases, run beside this file on the
      // same Redis) inspects every mutex of the namespace, and would answer this one's 500 too.
      if (kind === "redis") await redisCommand(["DEL", `hf:{mx:tenant-a:${name}}`]);
      else await runInDurableObject(lockObject(name), (_o, state) => state.storage.kv.delete("mutex"));
    }
  });
}
