import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { api, type StoreKind, uniqueName } from "../support/workers/api.js";
import { eventually, lockObject } from "../support/workers/lockObjectHelpers.js";

/**
 * A store clock that steps back must not stretch a live lease by the step
 * (lua/prelude.lua lease_end, leaseEnd in src/store/durable/records.ts).
 * The suite cannot move the store's clock here, so each case leaves the
 * store as such a step does: a lease whose last write is an hour ahead of
 * the store's now (it was written, then the clock went back an hour). What
 * a caller sees: the lease has at most its TTL left, a try-lock is told to
 * come back within the TTL, and a waiter gets the lock once that is over.
 */
const STEP_MS = 3_600_000;
const TTL_MS = 1500;

/** A lease end the step back moves: a time in ms (the store's record as this code wrote it), or the case fails. */
function planted(what: string, end: unknown): number {
  if (typeof end !== "number" || !Number.isFinite(end) || end < Date.now() - 60_000) {
    throw new Error(`no step back planted: ${what} is ${JSON.stringify(end)}, not the live lease's end (has the storage layout changed?)`);
  }
  return end;
}

export function clockStepBackConformance(kind: StoreKind) {
  const { post, get, env } = api(kind);
  const redis = async (command: Array<string | number>) => {
    const res = await fetch(env.UPSTASH_REDIS_REST_URL!, {
      method: "POST",
      headers: { authorization: `Bearer ${env.UPSTASH_REDIS_REST_TOKEN}` },
      body: JSON.stringify(command),
    });
    return ((await res.json()) as { result: unknown }).result;
  };
  /**
   * Moves a stored record's end an hour later, as a lease written before the step back looks after it.
   * A record or field it does not find (a storage layout that changed) fails here: planted nothing,
   * every case below would pass with nothing tested.
   */
  async function stepBack(objectKind: "mutex" | "rwlock" | "semaphore" | "idempotency", name: string, token: string) {
    if (kind === "redis") {
      const key = `hf:{${{ mutex: "mx", rwlock: "rw", semaphore: "sem", idempotency: "id" }[objectKind]}:tenant-a:${name}}`;
      if (objectKind === "mutex" || objectKind === "idempotency") {
        const field = objectKind === "mutex" ? "exp" : "deadline";
        const end = planted(`${key} ${field}`, Number(await redis(["HGET", key, field]))) + STEP_MS;
        await redis(["HSET", key, field, String(end)]);
        await redis(["PEXPIREAT", key, String(end + 60_000)]);
      } else {
        const rec = JSON.parse(String(await redis(["HGET", key, `h:${token}`])));
        rec.exp = String(planted(`${key} h:${token} exp`, Number(rec?.exp)) + STEP_MS);
        await redis(["HSET", key, `h:${token}`, JSON.stringify(rec)]);
        await redis(["PEXPIREAT", key, String(Number(rec.exp) + 60_000)]);
      }
      return;
    }
    await runInDurableObject(lockObject(name, objectKind), (_o, state) => {
      const kv = state.storage.kv;
      if (objectKind === "mutex") {
        const lease = kv.get<{ expiresAt: number }>("mutex");
        kv.put("mutex", { ...lease, expiresAt: planted("mutex expiresAt", lease?.expiresAt) + STEP_MS });
      } else if (objectKind === "idempotency") {
        const rec = kv.get<{ deadline: number; keepUntil: number }>("idem");
        kv.put("idem", {
          ...rec,
          deadline: planted("idem deadline", rec?.deadline) + STEP_MS,
          keepUntil: planted("idem keepUntil", rec?.keepUntil) + STEP_MS,
        });
      } else {
        const set = kv.get<{ holders: Record<string, { exp: number }> }>("holders");
        const h = set?.holders?.[token];
        const exp = planted(`holders ${token} exp`, h?.exp) + STEP_MS;
        kv.put("holders", { ...set, holders: { ...set?.holders, [token]: { ...h, exp } } });
      }
    });
    // The object keeps what it wrote in memory (src/store/durable/KeptKv.ts) and never sees a write made past it:
    // restarted, it reads the planted record from storage, as an object does when it starts on state left before.
    await runInDurableObject(lockObject(name, objectKind), (_o, state) => state.abort("restarted by the test")).catch(() => undefined);
  }

  it("mutex: a lease written before the store's clock stepped back an hour has at most its TTL left, and a waiter gets the lock after it", async () => {
    const name = uniqueName("clock-back");
    const grant = (await post(`/v1/locks/${name}/acquire`, { ttlMs: TTL_MS })).body;
    await stepBack("mutex", name, grant.token);
    const state = (await get(`/v1/locks/${name}`)).body;
    expect(state.held).toBe(true);
    expect(state.ttlMs).toBeLessThanOrEqual(TTL_MS);
    const busy = await post(`/v1/locks/${name}/acquire`, { ttlMs: TTL_MS });
    expect(busy.status).toBe(409);
    expect(busy.body.retryAfterMs).toBeLessThanOrEqual(TTL_MS);
    const waited = await post(`/v1/locks/${name}/acquire`, { ttlMs: TTL_MS, waitMs: 4 * TTL_MS });
    expect(waited.status).toBe(200);
    expect(waited.body.fence).toBeGreaterThan(grant.fence);
  });

  for (const which of ["rwlock", "semaphore"] as const) {
    it(`${which}: a holder's lease written before the clock stepped back has at most its TTL left, and a waiter gets in after it`, async () => {
      const name = uniqueName(`clock-back-${which}`);
      const base = which === "rwlock" ? `/v1/rwlocks/${name}/write` : `/v1/semaphores/${name}`;
      const body = which === "rwlock" ? { ttlMs: TTL_MS } : { ttlMs: TTL_MS, limit: 1 };
      const grant = (await post(`${base}/acquire`, body)).body;
      await stepBack(which, name, grant.token);
      const busy = await post(`${base}/acquire`, body);
      expect(busy.status).toBe(409);
      expect(busy.body.retryAfterMs).toBeLessThanOrEqual(TTL_MS);
      const waited = await post(`${base}/acquire`, { ...body, waitMs: 4 * TTL_MS });
      expect(waited.status).toBe(200);
    });
  }

  it("idempotency: a start written before the clock stepped back is in progress for at most its TTL, then taken over", async () => {
    const key = uniqueName("clock-back-idem");
    const started = await post(`/v1/idempotency/${key}/begin`, { ttlMs: TTL_MS });
    expect(started.status).toBe(201);
    await stepBack("idempotency", key, started.body.token);
    const state = (await get(`/v1/idempotency/${key}`)).body;
    expect(state.expiresAt - Date.now()).toBeLessThanOrEqual(TTL_MS + 1000);
    const busy = await post(`/v1/idempotency/${key}/begin`, { ttlMs: TTL_MS });
    expect(busy.status).toBe(409);
    expect(busy.body.retryAfterMs).toBeLessThanOrEqual(TTL_MS);
    // Taken over once that time has passed (a second caller retrying, as told), not an hour later.
    const taken = await eventually(
      () => post(`/v1/idempotency/${key}/begin`, { ttlMs: TTL_MS }),
      (r) => r.status === 201,
      4 * TTL_MS,
    );
    expect(taken.status).toBe(201);
  });
}
