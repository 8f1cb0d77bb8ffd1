import { env, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { api, type StoreKind, uniqueName } from "../../../../test/workers/support/api";
import { eventually } from "../../../../test/workers/support/lockObject";

/**
 * The many-holder kinds when their lock object restarts and loses its line
 * (a deploy, an eviction): the waiters get 503, and the gate their line left
 * in the store stops keeping try-locks out at the next release, not only
 * when every holder's lease has run out.
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
