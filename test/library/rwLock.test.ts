import type { Redis } from "@upstash/redis";
import { describe, expect, it } from "vitest";
import { sharedRedis, sleep, spyStore, unique } from "../support/library";
import { ConflictError, HoldfastError, InvalidInputError, LeaseLostError, LockedError, RwLock } from "holdfast";

/**
 * The read-write lock as an app uses it: `import { RwLock } from "holdfast"`
 * over a real @upstash/redis client, against a real redis-server behind the
 * project's Upstash gateway (see mutex.test.ts).
 */
const rwKeys = (redis: Redis, name: string, ns = "default") => redis.keys(`hf:{rw:${ns}:${name}}*`);

describe("RwLock over @upstash/redis", () => {
  it("readers share; a writer excludes readers and other writers", async () => {
    const name = unique("share");
    const lock = new RwLock(sharedRedis(), name);
    const r1 = await lock.readLock({ ttlMs: 5000 });
    const r2 = await lock.readLock({ ttlMs: 5000 });
    expect(r1).toMatchObject({ name, mode: "read", count: 1, ttlMs: 5000 });
    expect(r2).toMatchObject({ mode: "read", count: 1 });
    expect(r2.token).not.toBe(r1.token);
    expect(r2.fence).toBe(r1.fence); // readers that join share the fence
    expect(await lock.inspect()).toMatchObject({ mode: "read", readers: 2, writer: false, fence: r1.fence });

    const locked = await lock.writeLock({ ttlMs: 5000 }).catch((e) => e);
    expect(locked).toBeInstanceOf(LockedError);
    expect(locked.retryAfterMs).toBeGreaterThan(0);
    expect(locked.retryAfterMs).toBeLessThanOrEqual(5000);

    expect(await lock.release(r1.token)).toEqual({ released: true, mode: "read", count: 0 });
    await expect(lock.writeLock({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError); // one reader is enough
    expect(await lock.release(r2.token, "read")).toEqual({ released: true, mode: "read", count: 0 });
    expect(await lock.inspect()).toMatchObject({ mode: "free", readers: 0, writer: false });

    const w = await lock.writeLock({ ttlMs: 5000 });
    expect(w).toMatchObject({ mode: "write", count: 1 });
    expect(w.fence).toBeGreaterThan(r1.fence);
    await expect(lock.readLock({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
    await expect(lock.writeLock({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
    expect(await lock.inspect()).toMatchObject({ mode: "write", readers: 0, writer: true, fence: w.fence });
    expect(await lock.release(w.token)).toEqual({ released: true, mode: "write", count: 0 });
    const r3 = await lock.readLock({ ttlMs: 5000 });
    expect(r3.fence).toBeGreaterThan(w.fence);
  });

  it("a writer with waitMs polls until the readers release", async () => {
    const name = unique("wait");
    const lock = new RwLock(sharedRedis(), name);
    const r1 = await lock.readLock({ ttlMs: 5000 });
    const r2 = await lock.readLock({ ttlMs: 5000 });
    const started = Date.now();
    setTimeout(() => void new RwLock(sharedRedis(), name).release(r1.token), 150);
    setTimeout(() => void new RwLock(sharedRedis(), name).release(r2.token), 300);
    const w = await new RwLock(sharedRedis(), name).writeLock({ ttlMs: 5000, waitMs: 4000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(w.fence).toBeGreaterThan(r1.fence);
    expect(await lock.inspect()).toMatchObject({ mode: "write", readers: 0, writer: true });
  });

  it("a reader with waitMs polls until the writer releases; a wait that runs out is LockedError", async () => {
    const name = unique("rwait");
    const lock = new RwLock(sharedRedis(), name);
    const w = await lock.writeLock({ ttlMs: 5000 });
    const started = Date.now();
    const err = await lock.readLock({ ttlMs: 5000, waitMs: 300 }).catch((e) => e);
    expect(err).toBeInstanceOf(LockedError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    setTimeout(() => void lock.release(w.token), 150);
    expect(await lock.readLock({ ttlMs: 5000, waitMs: 4000 })).toMatchObject({ mode: "read", count: 1 });
  });

  it("re-entry counts per mode; a writer may take a read and keep it after the write (downgrade)", async () => {
    const name = unique("reenter");
    const lock = new RwLock(sharedRedis(), name);
    // A reader re-enters its read.
    const r = await lock.readLock({ ttlMs: 5000 });
    expect((await lock.readLock({ ttlMs: 6000, token: r.token })).count).toBe(2);
    expect(await lock.release(r.token)).toEqual({ released: false, mode: "read", count: 1 });
    expect(await lock.release(r.token)).toEqual({ released: true, mode: "read", count: 0 });

    // A writer re-enters its write, and takes a read.
    const w = await lock.writeLock({ ttlMs: 5000 });
    const again = await lock.writeLock({ ttlMs: 5000, token: w.token });
    expect(again).toMatchObject({ token: w.token, mode: "write", count: 2, fence: w.fence });
    const read = await lock.readLock({ ttlMs: 5000, token: w.token });
    expect(read).toMatchObject({ token: w.token, mode: "read", count: 1, fence: w.fence });
    expect(await lock.inspect()).toMatchObject({ mode: "write", writer: true, readers: 1 });

    expect(await lock.release(w.token, "write")).toEqual({ released: false, mode: "write", count: 1 });
    await expect(lock.readLock({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError); // still writing
    expect(await lock.release(w.token, "write")).toEqual({ released: false, mode: "write", count: 0 });

    // Downgraded: readers may join, writers still wait.
    expect(await lock.inspect()).toMatchObject({ mode: "read", writer: false, readers: 1, fence: w.fence });
    const other = await lock.readLock({ ttlMs: 5000 });
    expect(other.fence).toBe(w.fence);
    await expect(lock.writeLock({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
    // With no write left, a plain release drops the read.
    expect(await lock.release(w.token)).toEqual({ released: true, mode: "read", count: 0 });
    await lock.release(other.token);
    expect((await lock.inspect()).mode).toBe("free");
  });

  it("release without a mode drops the write hold first", async () => {
    const lock = new RwLock(sharedRedis(), unique("any"));
    const w = await lock.writeLock({ ttlMs: 5000 });
    await lock.readLock({ ttlMs: 5000, token: w.token });
    expect(await lock.release(w.token)).toEqual({ released: false, mode: "write", count: 0 });
    expect(await lock.release(w.token)).toEqual({ released: true, mode: "read", count: 0 });
  });

  it("a read token asking for the write lock is refused (upgrade_not_supported) and changes nothing", async () => {
    const name = unique("upgrade");
    const lock = new RwLock(sharedRedis(), name);
    const r = await lock.readLock({ ttlMs: 5000 });
    for (const waitMs of [0, 2000]) {
      const started = Date.now();
      const err = await lock.writeLock({ ttlMs: 5000, token: r.token, waitMs }).catch((e) => e);
      expect(err).toBeInstanceOf(ConflictError);
      expect(err).toBeInstanceOf(HoldfastError);
      expect(err.code).toBe("upgrade_not_supported");
      expect(err.message).toMatch(/release the read/);
      expect(Date.now() - started).toBeLessThan(1000); // never waits
    }
    expect(await lock.inspect()).toMatchObject({ mode: "read", readers: 1, writer: false });
    // The read hold is untouched: one level, and it still releases.
    expect(await lock.release(r.token)).toEqual({ released: true, mode: "read", count: 0 });
  });

  it("a lapsed reader frees the writer at its own TTL, and its token is lost", async () => {
    const name = unique("lapse");
    const lock = new RwLock(sharedRedis(), name);
    const short = await lock.readLock({ ttlMs: 300 });
    const long = await lock.readLock({ ttlMs: 600 });
    const started = Date.now();
    const w = await lock.writeLock({ ttlMs: 5000, waitMs: 5000 });
    // Behind the longer of the two leases: granted at its end on the store's clock, whatever its own answer took to come back.
    expect(Date.now()).toBeGreaterThanOrEqual(long.expiresAt - 150);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(w.fence).toBeGreaterThan(short.fence);
    for (const token of [short.token, long.token]) {
      await expect(lock.heartbeat(token)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(lock.release(token)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(lock.readLock({ ttlMs: 5000, token })).rejects.toBeInstanceOf(LeaseLostError);
    }
    expect(await lock.inspect()).toMatchObject({ mode: "write", readers: 0, writer: true });
  });

  it("heartbeat extends one holder's lease; a heartbeat keeps a reader past its first TTL", async () => {
    const name = unique("hb");
    const lock = new RwLock(sharedRedis(), name);
    // 1 s: the release after the last heartbeat (which sets the acquire's ttl again) must come within it, on a loaded machine too.
    const r = await lock.readLock({ ttlMs: 1000 });
    const hb = await lock.heartbeat(r.token, 9000);
    expect(hb).toMatchObject({ ttlMs: 9000, fence: r.fence });
    expect(hb.expiresAt).toBeGreaterThan(r.expiresAt);
    await sleep(1200);
    await expect(lock.writeLock({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
    expect((await lock.heartbeat(r.token)).ttlMs).toBe(1000); // default: the acquire's ttl
    expect(await lock.release(r.token)).toMatchObject({ released: true });
  });

  it("lease_lost: unknown tokens, released tokens and a mode the token does not hold", async () => {
    const lock = new RwLock(sharedRedis(), unique("lost"));
    await expect(lock.release("hf_nobody")).rejects.toBeInstanceOf(LeaseLostError);
    await expect(lock.heartbeat("hf_nobody")).rejects.toBeInstanceOf(LeaseLostError);
    await expect(lock.readLock({ ttlMs: 5000, token: "hf_nobody" })).rejects.toBeInstanceOf(LeaseLostError);
    await expect(lock.writeLock({ ttlMs: 5000, token: "hf_nobody", waitMs: 1000 })).rejects.toBeInstanceOf(LeaseLostError);

    const w = await lock.writeLock({ ttlMs: 5000 });
    const err = await lock.release(w.token, "read").catch((e) => e);
    expect(err).toBeInstanceOf(LeaseLostError);
    expect(err.code).toBe("lease_lost");
    expect(await lock.inspect()).toMatchObject({ mode: "write", writer: true }); // untouched
    await lock.release(w.token, "write");
    await expect(lock.release(w.token)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(lock.heartbeat(w.token)).rejects.toBeInstanceOf(LeaseLostError);

    const r = await lock.readLock({ ttlMs: 5000 });
    await expect(lock.release(r.token, "write")).rejects.toBeInstanceOf(LeaseLostError);
    expect(await lock.inspect()).toMatchObject({ mode: "read", readers: 1 });
  });

  it("withReadLock and withWriteLock release even when the work throws, and return its result", async () => {
    const lock = new RwLock(sharedRedis(), unique("with"));
    await expect(lock.withWriteLock({ ttlMs: 5000 }, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect((await lock.inspect()).mode).toBe("free");
    await expect(lock.withReadLock({ ttlMs: 5000 }, async () => Promise.reject(new Error("bang")))).rejects.toThrow("bang");
    expect((await lock.inspect()).mode).toBe("free");
    const seen = await lock.withReadLock({ ttlMs: 5000 }, async (g) => {
      expect((await lock.inspect()).mode).toBe("read");
      return g.mode;
    });
    expect(seen).toBe("read");
    expect(await lock.withWriteLock({ ttlMs: 5000 }, async (g) => g.count)).toBe(1);
    expect((await lock.inspect()).mode).toBe("free");
    // A lease lost during the work is not an error of the release.
    expect(
      await lock.withWriteLock({ ttlMs: 150 }, async () => {
        await sleep(300);
        return "late";
      }),
    ).toBe("late");
  });

  it("withReadLock by a writer's token releases only the read it took", async () => {
    const lock = new RwLock(sharedRedis(), unique("with-token"));
    const w = await lock.writeLock({ ttlMs: 5000 });
    await lock.withReadLock({ ttlMs: 5000, token: w.token }, async (g) => expect(g.mode).toBe("read"));
    expect(await lock.inspect()).toMatchObject({ mode: "write", writer: true, readers: 0 });
    expect(await lock.release(w.token)).toEqual({ released: true, mode: "write", count: 0 });
  });

  it("namespaces keep the same name apart", async () => {
    const name = unique("ns");
    await new RwLock(sharedRedis(), name, { namespace: "a" }).writeLock({ ttlMs: 5000 });
    expect((await new RwLock(sharedRedis(), name, { namespace: "b" }).writeLock({ ttlMs: 5000 })).count).toBe(1);
  });

  it("8 concurrent loops never see a reader beside a writer nor two writers", async () => {
    const name = unique("race");
    let readers = 0;
    let writers = 0;
    const violations: string[] = [];
    const done = { read: 0, write: 0, locked: 0 };
    const loop = async (id: number) => {
      const lock = new RwLock(sharedRedis(), name);
      for (let i = 0; i < 8; i++) {
        const write = (id + i) % 3 === 0;
        try {
          const g = write ? await lock.writeLock({ ttlMs: 10_000, waitMs: 8000 }) : await lock.readLock({ ttlMs: 10_000, waitMs: 8000 });
          if (write) {
            if (readers > 0 || writers > 0) violations.push(`writer ${id} beside ${readers} readers, ${writers} writers`);
            writers++;
          } else {
            if (writers > 0) violations.push(`reader ${id} beside a writer`);
            readers++;
          }
          await sleep(Math.random() * 10);
          if (write) writers--;
          else readers--;
          await lock.release(g.token);
          done[write ? "write" : "read"]++;
        } catch (err) {
          if (!(err instanceof LockedError)) throw err;
          done.locked++;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, id) => loop(id)));
    expect(violations).toEqual([]);
    expect(done.read).toBeGreaterThan(0);
    expect(done.write).toBeGreaterThan(0);
    expect(await new RwLock(sharedRedis(), name).inspect()).toMatchObject({ mode: "free", readers: 0, writer: false });
  }, 60_000);
});

describe("bad input to RwLock changes nothing and names the field", () => {
  const redis = sharedRedis();

  it("names and namespaces outside the contract's patterns are refused at construction", () => {
    for (const name of ["a b", "a{b}", "", "x".repeat(201), "a/b"]) {
      expect(() => new RwLock(redis, name)).toThrow(expect.objectContaining({ code: "invalid_name" }));
    }
    for (const namespace of ["a:b", "a{b", "", "x".repeat(65), "a b"]) {
      expect(() => new RwLock(redis, "c", { namespace })).toThrow(expect.objectContaining({ code: "invalid_namespace" }));
    }
  });

  const acquireCases = [
    ["a fractional ttlMs", { ttlMs: 1500.5 }, "invalid_ttl", "ttlMs"],
    ["a missing ttlMs", {}, "invalid_ttl", "ttlMs"],
    ["ttlMs below 100", { ttlMs: 99 }, "invalid_ttl", "ttlMs"],
    ["a huge ttlMs", { ttlMs: 1e12 }, "invalid_ttl", "ttlMs"],
    ["ttlMs as a string", { ttlMs: "1000" }, "invalid_ttl", "ttlMs"],
    ["waitMs past the longest timer", { ttlMs: 1000, waitMs: 2_147_483_648 }, "invalid_wait", "waitMs"],
    ["a negative waitMs", { ttlMs: 1000, waitMs: -5 }, "invalid_wait", "waitMs"],
    ["an empty token", { ttlMs: 1000, token: "" }, "invalid_token", "token"],
    ["a token of 257 characters", { ttlMs: 1000, token: "t".repeat(257) }, "invalid_token", "token"],
    ["a token of 200 three-byte characters (600 bytes)", { ttlMs: 1000, token: "€".repeat(200) }, "invalid_token", "token"],
    ["a numeric token", { ttlMs: 1000, token: 42 }, "invalid_token", "token"],
  ] as const;

  for (const method of ["readLock", "writeLock", "withReadLock", "withWriteLock"] as const) {
    for (const [label, options, code, field] of acquireCases) {
      it(`${method} with ${label} throws InvalidInputError ${code} before any store call`, async () => {
        const name = unique("bad");
        const { store, calls } = spyStore(redis);
        const lock = new RwLock(store, name);
        let ran = false;
        const call =
          method === "readLock" || method === "writeLock"
            ? lock[method](options as never)
            : lock[method](options as never, async () => {
                ran = true;
              });
        const err = await call.catch((e) => e);
        expect(err).toBeInstanceOf(InvalidInputError);
        expect(err.code).toBe(code);
        expect(err.message).toContain(field);
        expect(ran).toBe(false);
        expect(calls).toEqual([]);
        expect(await rwKeys(redis, name)).toEqual([]);
        expect((await lock.writeLock({ ttlMs: 5000 })).count).toBe(1); // not stuck
      });
    }
  }

  it("heartbeat and release with bad arguments throw before any store call and leave the holder as it was", async () => {
    const name = unique("bad-hb");
    const { store, calls } = spyStore(redis);
    const lock = new RwLock(store, name);
    const w = await lock.writeLock({ ttlMs: 5000 });
    const before = await redis.hgetall(`hf:{rw:default:${name}}`);
    calls.length = 0;
    const cases: Array<[() => Promise<unknown>, string, string]> = [
      [() => lock.heartbeat("", 5000), "invalid_token", "token"],
      [() => lock.heartbeat(7 as never), "invalid_token", "token"],
      [() => lock.heartbeat(w.token, 50), "invalid_ttl", "ttlMs"],
      [() => lock.heartbeat(w.token, 1000.5), "invalid_ttl", "ttlMs"],
      [() => lock.heartbeat(w.token, "1000" as never), "invalid_ttl", "ttlMs"],
      [() => lock.release(""), "invalid_token", "token"],
      [() => lock.release("t".repeat(257)), "invalid_token", "token"],
      [() => lock.release("€".repeat(200)), "invalid_token", "token"],
      [() => lock.heartbeat("€".repeat(200)), "invalid_token", "token"],
      [() => lock.release(w.token, "writer" as never), "invalid_mode", "mode"],
      [() => lock.release(w.token, "any" as never), "invalid_mode", "mode"],
      [() => lock.release(w.token, null as never), "invalid_mode", "mode"],
    ];
    for (const [call, code, field] of cases) {
      const err = (await call().catch((e) => e)) as InvalidInputError;
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err.code).toBe(code);
      expect(err.message).toContain(field);
    }
    expect(calls).toEqual([]);
    expect(await redis.hgetall(`hf:{rw:default:${name}}`)).toEqual(before);
    expect(await lock.release(w.token)).toEqual({ released: true, mode: "write", count: 0 });
  });
});
