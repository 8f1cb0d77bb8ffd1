// The Durable store keeps a write's answer (an rq:<request id> row, 2 minutes) only when a retry can bring
// its id back, because the client sent Holdfast-Request-Id; without one no row is written at all.
import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { api, KEY_ADMIN, uniqueName } from "../../support/workers/api";
import { lockObject } from "../../support/workers/lockObjectHelpers";

type Kind = "mutex" | "rwlock" | "semaphore" | "idempotency";
const { post } = api("durable");
const admin = { key: KEY_ADMIN };

/** The answer rows the lock's object keeps now. */
const answerRows = (name: string, kind: Kind) =>
  runInDurableObject(lockObject(name, kind), (_o, state) => [...state.storage.kv.list({ prefix: "rq:" })].length);

/** A remembered write's answer: the write (its path after the lock's name), its status, and what its body said. */
interface Answer {
  write: string;
  status: number;
  count?: number;
  released?: boolean | number;
  available?: number;
  state?: string;
}

/**
 * Every write of a kind that the store answers again on a retry (re-entries, releases, force releases,
 * begins, completes, fails), each with a fresh client id when `ids`; answers what each was answered.
 */
async function rememberedWrites(kind: Kind, name: string, ids: boolean): Promise<Answer[]> {
  const answers: Answer[] = [];
  const write = async (path: string, body: object, opts: { key?: string } = {}) => {
    const r = await post(path, body, ids ? { ...opts, headers: { "Holdfast-Request-Id": `rq-${crypto.randomUUID()}` } } : opts);
    const { count, released, available, state } = r.body;
    answers.push({ write: path.slice(path.indexOf(name) + name.length + 1), status: r.status, count, released, available, state });
    return r.body;
  };
  if (kind === "mutex") {
    const { token } = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 })).body;
    await write(`/v1/locks/${name}/acquire`, { ttlMs: 5000, token });
    await write(`/v1/locks/${name}/release`, { token });
    await write(`/v1/locks/${name}/force-release`, { reason: "answer rows" }, admin);
  } else if (kind === "rwlock") {
    const { token } = (await post(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 5000 })).body;
    await write(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 5000, token });
    await write(`/v1/rwlocks/${name}/read/release`, { token });
    await write(`/v1/rwlocks/${name}/force-release`, { reason: "answer rows" }, admin);
  } else if (kind === "semaphore") {
    const { token } = (await post(`/v1/semaphores/${name}/acquire`, { limit: 2, ttlMs: 5000 })).body;
    await write(`/v1/semaphores/${name}/release`, { token });
    await post(`/v1/semaphores/${name}/acquire`, { limit: 2, ttlMs: 5000 });
    await write(`/v1/semaphores/${name}/force-release`, { reason: "answer rows" }, admin);
  } else {
    const first = await write(`/v1/idempotency/${name}/begin`, { ttlMs: 5000 });
    await write(`/v1/idempotency/${name}/fail`, { token: first.token });
    const second = await write(`/v1/idempotency/${name}/begin`, { ttlMs: 5000 });
    await write(`/v1/idempotency/${name}/complete`, { token: second.token, response: 1 });
  }
  return answers;
}

/** What each write is answered, ids or not: a row kept or not changes no answer. */
const EXPECTED: Record<Kind, Answer[]> = {
  mutex: [
    { write: "acquire", status: 200, count: 2 }, // the holder's re-entry
    { write: "release", status: 200, released: false, count: 1 }, // one entry of two given back: still held
    { write: "force-release", status: 200, released: 1 },
  ],
  rwlock: [
    { write: "read/acquire", status: 200, count: 2 },
    { write: "read/release", status: 200, released: false, count: 1 },
    { write: "force-release", status: 200, released: 1 },
  ],
  semaphore: [
    { write: "release", status: 200, released: true, available: 2 },
    // Only the permit taken after the release is left to free.
    { write: "force-release", status: 200, released: 1 },
  ],
  idempotency: [
    { write: "begin", status: 201, state: "started" },
    { write: "fail", status: 200, state: "absent" },
    // The failed key starts anew, and this run completes it.
    { write: "begin", status: 201, state: "started" },
    { write: "complete", status: 200, state: "completed" },
  ],
};

it.each(["mutex", "rwlock", "semaphore", "idempotency"] as const)(
  "%s writes keep their answer rows only when the client sent its own request id",
  async (kind) => {
    const without = uniqueName(`rows-${kind}`);
    expect(await rememberedWrites(kind, without, false)).toEqual(EXPECTED[kind]);
    expect(await answerRows(without, kind)).toBe(0);
    const withIds = uniqueName(`rows-id-${kind}`);
    expect(await rememberedWrites(kind, withIds, true)).toEqual(EXPECTED[kind]);
    expect(await answerRows(withIds, kind)).toBe(EXPECTED[kind].length);
  },
);
