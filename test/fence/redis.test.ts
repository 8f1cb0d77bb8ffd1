import { Redis } from "@upstash/redis";
import { describe, expect, inject, it } from "vitest";
import { FenceInputError, fenceKeyOf, RedisFence, StaleFenceError } from "../../src/fence/index.js";

/**
 * holdfast/fence over Redis as an app uses it: the real @upstash/redis client,
 * a real redis-server behind the project's Upstash gateway, which runs the
 * scripts as Upstash does (key locking on: a script touching a key outside
 * its KEYS is refused, so these tests also show every key is declared).
 */
const redis = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") });
/** The same database read without the client's JSON decoding: what is stored, as stored. */
const raw = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken"), automaticDeserialization: false });
const fenced = new RedisFence(redis);
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
/** A resource of this file's own: the stack's Redis is shared with other files (the README's sample writes orders:42). */
const NAMED = unique("orders");

describe("RedisFence", () => {
  it("refuses an older fence after a claim, naming both, and writes nothing", async () => {
    const key = unique("fence:set");
    await fenced.set(key, 5, "from 5");
    expect(await fenced.claim(key, 7)).toEqual({ previous: 5 });
    const err = await fenced.set(key, 6, "from 6").catch((e) => e);
    expect(err).toBeInstanceOf(StaleFenceError);
    expect(err).toMatchObject({ code: "stale_fence", resource: key, fence: 6, current: 7 });
    expect(err.message).toMatch(/fence 6 .* fence 7/);
    expect(await redis.get(key)).toBe("from 5");
    expect(await redis.get(fenceKeyOf(key))).toBe(7);
  });

  it("refuses each fenced write with an older fence, and lets an equal or newer one through", async () => {
    const key = unique("fence:kinds");
    await fenced.claim(key, 10);
    await expect(fenced.del(key, 9)).rejects.toBeInstanceOf(StaleFenceError);
    await expect(fenced.hset(`${key}:h`, 9, { a: 1 })).resolves.toBe(1); // another resource, its own fence
    await fenced.claim(`${key}:h`, 10);
    await expect(fenced.hset(`${key}:h`, 9, { a: 2 })).rejects.toBeInstanceOf(StaleFenceError);
    await expect(fenced.incrby(key, 9, 1)).rejects.toBeInstanceOf(StaleFenceError);
    await expect(fenced.eval(key, 9, "return redis.call('SET', KEYS[1], ARGV[1])", [key], ["x"])).rejects.toBeInstanceOf(StaleFenceError);
    expect(await redis.get(key)).toBeNull();
    expect(await redis.hget(`${key}:h`, "a")).toBe(1);

    // Equal fences (the holder itself, or two writers under one lease) are allowed.
    expect(await fenced.incrby(key, 10, 2)).toBe(2);
    expect(await fenced.incrby(key, 10, 3)).toBe(5);
    expect(await fenced.hset(`${key}:h`, 10, { a: "two", b: 3 })).toBe(1);
    expect(await redis.hgetall(`${key}:h`)).toEqual({ a: "two", b: 3 });
    expect(await fenced.del(key, 11)).toBe(1);
    expect(await redis.get(fenceKeyOf(key))).toBe(11); // the fence stays after the key is gone
    await expect(fenced.set(key, 10, "late")).rejects.toMatchObject({ fence: 10, current: 11 });
    expect(await redis.exists(key)).toBe(0);
  });

  it("runs the caller's Lua only while the fence holds, with its own KEYS and ARGV", async () => {
    const key = unique("fence:eval");
    const script = "redis.call('RPUSH', KEYS[1], ARGV[1]) return {#KEYS, ARGV[2], redis.call('LLEN', KEYS[1])}";
    expect(await fenced.eval(key, 3, script, [key], ["a", "second"])).toEqual([1, "second", 1]);
    expect(await fenced.eval(key, 4, script, [key], ["b", "x"])).toEqual([1, "x", 2]);
    await expect(fenced.eval(key, 3, script, [key], ["c", "x"])).rejects.toMatchObject({ code: "stale_fence", fence: 3, current: 4 });
    expect(await redis.lrange(key, 0, -1)).toEqual(["a", "b"]);
  });

  it("keeps a key without braces, with a hash tag, and with a stray brace each beside its own fence", async () => {
    const id = unique("x");
    const keys = [`fence:plain:${id}`, `{fence:${id}}:tagged`, `{fence:plain:${id}}`, `fence:a}b:${id}`, `fence:x{}y:${id}`];
    expect(new Set(keys.map(fenceKeyOf)).size).toBe(keys.length);
    // Upstash's key rule refuses a script that touches a key outside KEYS: each runs, so each fence key is declared.
    for (const [i, key] of keys.entries()) await fenced.set(key, i + 1, `v${i}`);
    for (const [i, key] of keys.entries()) {
      expect(await redis.get(key)).toBe(`v${i}`);
      expect(await redis.get(fenceKeyOf(key))).toBe(i + 1);
    }
    expect(fenceKeyOf("orders:42")).toBe("holdfast:fence{orders:42}");
    expect(fenceKeyOf("{orders}:42")).toBe("holdfast:fence:{orders}:42");
  });

  it.each<[string, (key: string) => Promise<unknown>, string]>([
    ["a fence at 2^53", (key) => fenced.set(key, 2 ** 53, "v"), "invalid_fence"],
    ["a fence past 2^53 as text", (key) => fenced.claim(key, "9007199254740993" as never), "invalid_fence"],
    ["a negative fence", (key) => fenced.claim(key, -1), "invalid_fence"],
    ["a fractional fence", (key) => fenced.incrby(key, 1.5, 1), "invalid_fence"],
    ["an object value", (key) => fenced.set(key, 1, { a: 1 } as never), "invalid_value"],
    ["an increment past 2^53", (key) => fenced.incrby(key, 1, 2 ** 53), "invalid_value"],
    ["no fields", (key) => fenced.hset(key, 1, {}), "invalid_value"],
    ["a field value that is not text", (key) => fenced.hset(key, 1, { a: "ok", b: null as never }), "invalid_value"],
    ["an empty script", (key) => fenced.eval(key, 1, " ", [key]), "invalid_value"],
  ])("refuses %s before writing anything", async (_, write, code) => {
    const key = unique("fence:bad");
    const err = (await write(key).catch((e: unknown) => e)) as FenceInputError;
    expect(err).toBeInstanceOf(FenceInputError);
    expect(err.code).toBe(code);
    expect(await redis.exists(key, fenceKeyOf(key))).toBe(0);
  });

  it.each([
    ["empty", ""],
    ["over 200 UTF-8 bytes", "é".repeat(101)],
    ["that is a fence's key", fenceKeyOf(NAMED)],
  ])("refuses a resource name %s before writing anything", async (_, name) => {
    const err = await fenced.set(name, 1, "v").catch((e) => e);
    expect(err).toMatchObject({ code: "invalid_resource", field: "resource" });
    expect(await redis.exists(fenceKeyOf(name || "x"), fenceKeyOf(NAMED))).toBe(0);
  });

  it("refuses a resource whose stored fence is corrupt, and leaves it as it is", async () => {
    const key = unique("fence:corrupt");
    for (const planted of ["12abc", "-3", "007", "1.0", "9007199254740992"]) {
      await redis.set(fenceKeyOf(key), planted);
      const err = await fenced.set(key, 99, "v").catch((e) => e);
      expect(err).toBeInstanceOf(FenceInputError);
      expect(err).toMatchObject({ code: "corrupt_fence", field: "resource" });
      await expect(fenced.claim(key, 99)).rejects.toMatchObject({ code: "corrupt_fence" });
      expect(await redis.get(key)).toBeNull();
      expect(await raw.get(fenceKeyOf(key))).toBe(planted);
    }
    await redis.del(fenceKeyOf(key));
    await redis.hset(fenceKeyOf(key), { not: "a fence" });
    await expect(fenced.set(key, 1, "v")).rejects.toMatchObject({ code: "corrupt_fence" });
    expect(await redis.get(key)).toBeNull();
  });

  it("writes nothing, fence included, when Redis refuses the write itself", async () => {
    const key = unique("fence:notint");
    await redis.set(key, "not a number");
    await expect(fenced.incrby(key, 4, 1)).rejects.toThrow(/not an integer/);
    expect(await redis.get(key)).toBe("not a number");
    expect(await redis.exists(fenceKeyOf(key))).toBe(0);
  });

  it("is idempotent for SET run twice with one fence", async () => {
    const key = unique("fence:twice");
    await fenced.set(key, 8, "same");
    await fenced.set(key, 8, "same");
    expect(await redis.get(key)).toBe("same");
    expect(await redis.get(fenceKeyOf(key))).toBe(8);
  });
});
