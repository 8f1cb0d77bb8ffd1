// The Durable store keeps a write's answer (an rq:<request id> row, 2 minutes) only when a retry can bring
// its id back, because the client sent Holdfast-Request-Id; without one no row is written at all.
import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { api, KEY_ADMIN, uniqueName } from "./support/api";
import { lockObject } from "./support/lockObjectHelpers";

type Kind = "mutex" | "rwlock" | "semaphore" | "idempotency";
const { post } = api("durable");
const admin = { key: KEY_ADMIN };

/** The answer rows the lock's object keeps now. */
const answerRows = (name: string, kind: Kind) =>
  runInDurableObject(lockObject(name, kind), (_o, state) => [...state.storage.kv.list({ prefix: "rq:" })].length);

/**
 * Every write of a kind that the store answers again on a retry (re-entries, releases, force releases,
 * begins, completes, fails), each with a fresh client id when `ids`; answers how many that is.
 */
async function rememberedWrites(kind: Kind, name: string, ids: boolean): Promise<number> {
  let n = 0;
  const once = (opts: { key?: string } = {}) => {
    n += 1;
    return ids ? { ...opts, headers: { "Holdfast-Request-Id": `rq-${crypto.randomUUID()}` } } : opts;
  };
  const ok = async (path: string, body: object, opts?: object) => expect((await post(path, body, opts)).status).toBeLessThan(300);
  if (kind === "mutex") {
    const { token } = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 })).body;
    await ok(`/v1/locks/${name}/acquire`, { ttlMs: 5000, token }, once());
    await ok(`/v1/locks/${name}/release`, { token }, once());
    await ok(`/v1/locks/${name}/force-release`, { reason: "answer rows" }, once(admin));
  } else if (kind === "rwlock") {
    const { token } = (await post(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 5000 })).body;
    await ok(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 5000, token }, once());
    await ok(`/v1/rwlocks/${name}/read/release`, { token }, once());
    await ok(`/v1/rwlocks/${name}/force-release`, { reason: "answer rows" }, once(admin));
  } else if (kind === "semaphore") {
    const { token } = (await post(`/v1/semaphores/${name}/acquire`, { limit: 2, ttlMs: 5000 })).body;
    await ok(`/v1/semaphores/${name}/release`, { token }, once());
    await post(`/v1/semaphores/${name}/acquire`, { limit: 2, ttlMs: 5000 });
    await ok(`/v1/semaphores/${name}/force-release`, { reason: "answer rows" }, once(admin));
  } else {
    const first = (await post(`/v1/idempotency/${name}/begin`, { ttlMs: 5000 }, once())).body;
    await ok(`/v1/idempotency/${name}/fail`, { token: first.token }, once());
    const second = (await post(`/v1/idempotency/${name}/begin`, { ttlMs: 5000 }, once())).body;
    await ok(`/v1/idempotency/${name}/complete`, { token: second.token, response: 1 }, once());
  }
  return n;
}

it.each(["mutex", "rwlock", "semaphore", "idempotency"] as const)(
  "%s writes keep their answer rows only when the client sent its own request id",
  async (kind) => {
    const without = uniqueName(`rows-${kind}`);
    expect(await rememberedWrites(kind, without, false)).toBeGreaterThan(0);
    expect(await answerRows(without, kind)).toBe(0);
    const withIds = uniqueName(`rows-id-${kind}`);
    const n = await rememberedWrites(kind, withIds, true);
    expect(await answerRows(withIds, kind)).toBe(n);
  },
);
