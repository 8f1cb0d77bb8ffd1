import { env, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { REGISTRATION_GRACE_MS } from "../../../src/limits.js";
import { api, type StoreKind, uniqueName } from "../../support/workers/api";
import { eventually } from "../../support/workers/lockObjectHelpers";

/**
 * The many-holder kinds when their lock object restarts and loses its line
 * (a deploy, an eviction): the waiters get 503, and the gate their line left
 * in the store stops keeping try-locks out at the next release, not only
 * when every holder's lease has run out; and with no release, a grace after
 * the leases it was set behind, even while their holders heartbeat.
 */
export function lostLineConformance(kind: StoreKind) {
  const { post, get } = api(kind);
  const object = (lockKind: "rwlock" | "semaphore", name: string) => env.LOCK_OBJECT.get(env.LOCK_OBJECT.idFromName(`${lockKind}:tenant-a:${name}`));
  const restart = (lockKind: "rwlock" | "semaphore", name: string) =>
    runInDurableObject(object(lockKind, name), (_o, state) => state.abort("restarted by the test")).catch(() => undefined);

  it("read-write lock: after a restart lost the line, the writer's release lets try-lock readers in at once", async () => {
    const name = uniqueName("rw-lost-line");
    const writer = (await post(`/v1/rwlocks/${name}/write/acquire`, { ttlMs: 30_000 })).body;
    const reader = post(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 30_000, waitMs: 20_000 });
    await eventually(
      async () => (await get(`/v1/rwlocks/${name}`)).body.waiters,
      (w) => w === 1,
    );
    await restart("rwlock", name);
    expect((await reader).status).toBe(503);
    expect((await post(`/v1/rwlocks/${name}/write/release`, { token: writer.token })).status).toBe(200);
    // Without the idle step the gate would stand until the writer's lease end (30 s) + 5 s.
    const started = Date.now();
    const tryLock = await eventually(
      () => post(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 5000 }),
      (r) => r.status === 200,
      5000,
    );
    expect(tryLock.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  /**
   * The heartbeating holder's lease: long enough that a heartbeat every 200 ms keeps it on a loaded machine (a 1 s
   * lease lapsed there between two of them), short enough that the gate's end (this lease + the grace) comes soon.
   */
  const HEARTBEATING_TTL_MS = 3000;

  /** Heartbeats `token` every 200 ms until stopped (a holder that stays alive). */
  const keepHeartbeating = (path: string, token: string) => {
    let on = true;
    const loop = (async () => {
      while (on) {
        expect((await post(path, { token })).status).toBe(200);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    return async () => {
      on = false;
      await loop;
    };
  };

  it("read-write lock: the gate a lost line left does not outlive the leases it stood behind, however long the holder heartbeats", async () => {
    const name = uniqueName("rw-lost-line-hb");
    const reader = (await post(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: HEARTBEATING_TTL_MS })).body;
    const stop = keepHeartbeating(`/v1/rwlocks/${name}/heartbeat`, reader.token);
    try {
      const writer = post(`/v1/rwlocks/${name}/write/acquire`, { ttlMs: 30_000, waitMs: 20_000 });
      await eventually(
        async () => (await get(`/v1/rwlocks/${name}`)).body.waiters,
        (w) => w === 1,
      );
      // The writer's gate keeps try-lock readers out while it waits.
      expect((await post(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 1000 })).status).toBe(409);
      await restart("rwlock", name);
      expect((await writer).status).toBe(503);
      // Nobody waits any more: the gate ends a grace (5 s) after the reader's lease as it stood, not never.
      const joined = await eventually(
        () => post(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 1000 }),
        (r) => r.status === 200,
        HEARTBEATING_TTL_MS + REGISTRATION_GRACE_MS + 3000,
      );
      expect(joined.status).toBe(200);
    } finally {
      await stop();
    }
  });

  it("semaphore: the gate a lost line left does not outlive the leases it stood behind, however long the holder heartbeats", async () => {
    const name = uniqueName("sem-lost-line-hb");
    const holder = (await post(`/v1/semaphores/${name}/acquire`, { limit: 2, ttlMs: HEARTBEATING_TTL_MS })).body;
    const stop = keepHeartbeating(`/v1/semaphores/${name}/heartbeat`, holder.token);
    try {
      const waiter = post(`/v1/semaphores/${name}/acquire`, { limit: 2, permits: 2, ttlMs: 30_000, waitMs: 20_000 });
      await eventually(
        async () => (await get(`/v1/semaphores/${name}`)).body.waiters,
        (w) => w === 1,
      );
      // The waiter's gate keeps a try-lock for the free permit out while it waits.
      expect((await post(`/v1/semaphores/${name}/acquire`, { limit: 2, ttlMs: 1000 })).status).toBe(409);
      await restart("semaphore", name);
      expect((await waiter).status).toBe(503);
      const taken = await eventually(
        () => post(`/v1/semaphores/${name}/acquire`, { limit: 2, ttlMs: 1000 }),
        (r) => r.status === 200,
        HEARTBEATING_TTL_MS + REGISTRATION_GRACE_MS + 3000,
      );
      expect(taken.status).toBe(200);
    } finally {
      await stop();
    }
  });

  it("semaphore: after a restart lost the line, a release lets try-locks take the permits at once", async () => {
    const name = uniqueName("sem-lost-line");
    const holder = (await post(`/v1/semaphores/${name}/acquire`, { limit: 1, ttlMs: 30_000 })).body;
    const waiter = post(`/v1/semaphores/${name}/acquire`, { limit: 1, ttlMs: 30_000, waitMs: 20_000 });
    await eventually(
      async () => (await get(`/v1/semaphores/${name}`)).body.waiters,
      (w) => w === 1,
    );
    await restart("semaphore", name);
    expect((await waiter).status).toBe(503);
    expect((await post(`/v1/semaphores/${name}/release`, { token: holder.token })).status).toBe(200);
    const tryLock = await eventually(
      () => post(`/v1/semaphores/${name}/acquire`, { limit: 1, ttlMs: 5000 }),
      (r) => r.status === 200,
      5000,
    );
    expect(tryLock.status).toBe(200);
  });
}
