// The Durable store's idempotency rules (src/kinds/idempotency/durableIdempotency.ts) at every
// boundary time: what GET answers (inspect) and what a begin of the same key does at the same
// instant must agree, or a client that read `absent` could be refused, or one that read
// `completed` could start the work again. Issue 44 saw a conformance run read `absent`, then a
// begin refused; the store's clock is forced here, so each boundary is met exactly, not by luck.
import { describe, expect, it } from "vitest";
import { begin, complete, inspect } from "../../../src/kinds/idempotency/durableIdempotency";

/** A lock object's storage.kv, in memory: what the rules read and write. */
class MemoryKv implements SyncKvStorage {
  readonly rows = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.rows.get(key) as T | undefined;
  }
  put<T>(key: string, value: T): void {
    this.rows.set(key, structuredClone(value));
  }
  delete(key: string): boolean {
    return this.rows.delete(key);
  }
  *list<T>(options: SyncKvListOptions = {}): Iterable<[string, T]> {
    for (const [k, v] of [...this.rows].sort(([a], [b]) => (a < b ? -1 : 1))) if (k.startsWith(options.prefix ?? "")) yield [k, v as T];
  }
  /** An independent copy: each question is asked of the state as it stood (a read may delete or move a record). */
  copy(): MemoryKv {
    const kv = new MemoryKv();
    for (const [k, v] of this.rows) kv.rows.set(k, structuredClone(v));
    return kv;
  }
}

const T0 = 1_800_000_000_000;
const TTL = 500;
const RETAIN = 1000;
const ids = (n: number) => ({ requestId: `rq_${n}`, idUnrepeated: true });
const beginAt = (kv: MemoryKv, now: number, fingerprint: string, n: number) =>
  begin(kv, now, { token: `hf_owner${n}`, ttlMs: 5000, retainMs: RETAIN, fingerprint, ...ids(n) });

/** What a begin with `fingerprint` at `now` does, beside what GET answers at that instant; each of its own copy of the state. */
function askedAt(kv: MemoryKv, now: number, fingerprint: string) {
  return { get: inspect(kv.copy(), now).state, begin: beginAt(kv.copy(), now, fingerprint, 99).status };
}

/** The instants around each time the rules compare with: one before, the time itself, one after. */
const around = (...times: number[]) => times.flatMap((t) => [t - 1, t, t + 1]);

describe("Durable store: GET and begin decide by one rule at every boundary", () => {
  it("a start: in progress while its deadline has not come (GET `started`), then free to begin (GET `absent`), and its fingerprint still guards the key until its keep time", () => {
    const kv = new MemoryKv();
    expect(begin(kv, T0, { token: "hf_first", ttlMs: TTL, retainMs: RETAIN, fingerprint: "x", ...ids(1) }).status).toBe("started");
    for (const now of around(T0 + TTL, T0 + RETAIN)) {
      const same = askedAt(kv, now, "x");
      const other = askedAt(kv, now, "y");
      const running = now < T0 + TTL;
      const kept = now < T0 + RETAIN;
      expect(same, `at T0 + ${now - T0}`).toEqual({ get: running ? "started" : "absent", begin: running ? "in_progress" : "started" });
      // Another fingerprint is refused while the record is kept (the vanished owner's fingerprint outlives it), whatever GET says.
      expect(other, `at T0 + ${now - T0}`).toEqual({ get: running ? "started" : "absent", begin: kept ? "mismatch" : "started" });
    }
  });

  it("a completed record: GET `completed` and a begin replays it while it is kept, GET `absent` and a begin starts anew from the same instant", () => {
    const kv = new MemoryKv();
    expect(begin(kv, T0, { token: "hf_first", ttlMs: TTL, retainMs: RETAIN, fingerprint: "x", ...ids(1) }).status).toBe("started");
    const done = complete(kv, T0 + 100, { token: "hf_first", responseJson: '"done"', ...ids(2) });
    expect(done).toMatchObject({ status: "ok", completedAt: T0 + 100 });
    for (const now of around(T0 + 100 + RETAIN)) {
      const kept = now < T0 + 100 + RETAIN;
      for (const fingerprint of ["x", "y"]) {
        const asked = askedAt(kv, now, fingerprint);
        const whileKept = fingerprint === "x" ? "completed" : "mismatch";
        expect(asked, `at completedAt + ${now - T0 - 100}, fingerprint ${fingerprint}`).toEqual({
          get: kept ? "completed" : "absent",
          begin: kept ? whileKept : "started",
        });
      }
    }
  });
});
