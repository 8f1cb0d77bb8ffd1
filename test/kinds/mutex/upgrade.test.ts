import fs from "node:fs";
import path from "node:path";
import { Redis } from "@upstash/redis";
import { describe, expect, inject, it, vi } from "vitest";
import { Mutex } from "holdfast";

/**
 * 0.1 and 0.2 on one Redis (CHANGELOG, 0.2.0). 0.2 keeps a mutex in one hash
 * under the key 0.1's lease used, with the last fence as a field; 0.1 kept the
 * fence, its registered waiter and its lock-delay in keys of their own and let
 * the lease's key expire with the lease. Mixed versions may lose liveness (a
 * 0.1 process finds 0.2's locks held), never give the lock to two holders,
 * and fences keep rising across the upgrade.
 *
 * The 0.1 scripts are the ones 0.1.0 ran, as tools/gen-lua-scripts.mjs built
 * them at 4b4fae9 (lua/mutex/acquire.lua, release_unwatched.lua and
 * heartbeat.lua with the prelude): fixtures/acquire-0.1.lua,
 * release-0.1.lua and heartbeat-0.1.lua.
 */
const redis = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken"), automaticDeserialization: false });
const fixture = (file: string) => fs.readFileSync(path.join(import.meta.dirname, "fixtures", file), "utf8").replace(/^#!.*\n/, "");
const ACQUIRE_01 = fixture("acquire-0.1.lua");
const RELEASE_01 = fixture("release-0.1.lua");
const HEARTBEAT_01 = fixture("heartbeat-0.1.lua");
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
const keyOf = (name: string) => `hf:{mx:default:${name}}`;

/** A 0.1 process's try-lock: its four keys, token and ttl, and (last) the caller's clock in µs. */
async function acquire01(name: string, token: string, ttlMs: number, callerClockUs = Date.now() * 1000): Promise<Record<string, string>> {
  const k = keyOf(name);
  const reply = await redis.eval(ACQUIRE_01, [k, `${k}:fence`, `${k}:next`, `${k}:delay`], [token, String(ttlMs), String(callerClockUs)]);
  return pairs(reply);
}

/** A 0.1 process's release (the library's: two keys). */
async function release01(name: string, token: string): Promise<Record<string, string>> {
  const k = keyOf(name);
  return pairs(await redis.eval(RELEASE_01, [k, `${k}:rq:${unique("rq")}`], [token]));
}

/** A 0.1 process's heartbeat: the lock and its delay key, token and ttl. */
async function heartbeat01(name: string, token: string, ttlMs: number): Promise<Record<string, string>> {
  const k = keyOf(name);
  return pairs(await redis.eval(HEARTBEAT_01, [k, `${k}:delay`], [token, String(ttlMs)]));
}

function pairs(reply: unknown): Record<string, string> {
  const list = JSON.parse(String(reply)) as string[];
  return Object.fromEntries(list.flatMap((v, i) => (i % 2 === 0 ? [[v, list[i + 1]]] : [])));
}

describe("0.1 meets 0.2 on one Redis", () => {
  it("a 0.1 process finds a lock 0.2 holds held, live or lapsed, and never takes it", async () => {
    const name = unique("upgrade-held");
    const lock = new Mutex(redis, name);
    const held = await lock.acquire({ ttlMs: 300 });
    expect(await acquire01(name, "hf_v01_process", 5000)).toMatchObject({ status: "busy" });
    // A 0.2 lease that lapsed keeps its owner field until the next 0.2 grant: 0.1 still reads it held.
    await expect.poll(async () => (await lock.inspect()).held, { timeout: 5000, interval: 25 }).toBe(false);
    expect(await acquire01(name, "hf_v01_process", 5000)).toMatchObject({ status: "busy" });
    // 0.2 knows it lapsed: the next 0.2 caller gets it, with a larger fence.
    const next = await lock.acquire({ ttlMs: 5000 });
    expect(next.fence).toBeGreaterThan(held.fence);
    expect(await acquire01(name, "hf_v01_process", 5000)).toMatchObject({ status: "busy" });
  });

  it("0.2 finds a lock 0.1 holds held, and takes it once 0.1 releases it", async () => {
    const name = unique("upgrade-old-holder");
    const lock = new Mutex(redis, name);
    const old = await acquire01(name, "hf_v01_holder", 5000);
    expect(old.status).toBe("granted");
    await expect(lock.acquire({ ttlMs: 5000 })).rejects.toMatchObject({ code: "locked" });
    expect(await release01(name, "hf_v01_holder")).toMatchObject({ status: "ok", released: "1" });
    const g = await lock.acquire({ ttlMs: 5000 });
    expect(g.fence).toBeGreaterThan(Number(old.fence));
  });

  it("0.2 releases a lease 0.1 granted with more than the usual fields (a holder label) whole", async () => {
    const name = unique("upgrade-label");
    const k = keyOf(name);
    // 0.1's grant with a label: owner, fence, ttl, exp and holder (five fields, as a 0.2 lease's usual five).
    const reply = pairs(
      await redis.eval(
        ACQUIRE_01,
        [k, `${k}:fence`, `${k}:next`, `${k}:delay`],
        ["hf_v01_label", "5000", "new", "0", "0", "0", "batch", "0", String(Date.now() * 1000)],
      ),
    );
    expect(reply.status).toBe("granted");
    await new Mutex(redis, name).release("hf_v01_label");
    // Nothing of the old lease is left to show as the next holder's.
    const next = await new Mutex(redis, name).acquire({ ttlMs: 5000 });
    expect(await new Mutex(redis, name).inspect()).toMatchObject({ held: true, holder: null, fence: next.fence });
  });

  it("a 0.1 process never grants a lock 0.2 released, so never a fence below 0.2's (even one 0.2 took from a clock an hour ahead)", async () => {
    const name = unique("upgrade-released");
    const lock = new Mutex(redis, name);
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 3_600_000 });
    let ahead: number;
    try {
      const g = await lock.acquire({ ttlMs: 5000 });
      ahead = g.fence;
      await lock.release(g.token);
    } finally {
      vi.useRealTimers();
    }
    expect(await acquire01(name, "hf_v01_after", 5000)).toMatchObject({ status: "busy" });
    expect((await lock.acquire({ ttlMs: 5000 })).fence).toBeGreaterThan(ahead);
  });

  it("a lease taken through 0.2 with a fence from a clock an hour ahead and released through 0.1 (which deletes the hash) leaves its fence to 0.1's and 0.2's next grants", async () => {
    const name = unique("upgrade-cross");
    const lock = new Mutex(redis, name);
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 3_600_000 });
    let g: Awaited<ReturnType<Mutex["acquire"]>>;
    try {
      g = await lock.acquire({ ttlMs: 5000 });
    } finally {
      vi.useRealTimers();
    }
    expect(await release01(name, g.token)).toMatchObject({ status: "ok", released: "1" });
    expect(await redis.exists(keyOf(name))).toBe(0);
    const old = await acquire01(name, "hf_v01_next", 5000);
    expect(Number(old.fence)).toBeGreaterThan(g.fence);
    expect(await release01(name, "hf_v01_next")).toMatchObject({ status: "ok" });
    expect((await lock.acquire({ ttlMs: 5000 })).fence).toBeGreaterThan(Number(old.fence));
  });

  it("a lease 0.1 heartbeated (setting the key to expire with the lease) and 0.2 carries on never ends when 0.1 said", async () => {
    // A deploy between the two: a lease taken through 0.2, heartbeated through 0.1 (which sets the key's expiry
    // to the lease's end), then heartbeated, or released and taken again, through 0.2. Every 0.2 write that
    // moves a lease's end sets the hash's own expiry.
    const [a, b] = [unique("upgrade-beat"), unique("upgrade-again")];
    const [lockA, lockB] = [new Mutex(redis, a), new Mutex(redis, b)];
    const [ga, gb] = [await lockA.acquire({ ttlMs: 5000 }), await lockB.acquire({ ttlMs: 5000 })];
    expect(await heartbeat01(a, ga.token, 300)).toMatchObject({ status: "ok" });
    expect(await heartbeat01(b, gb.token, 300)).toMatchObject({ status: "ok" });
    await lockA.heartbeat(ga.token, 60_000);
    await lockB.release(gb.token);
    const c = await lockB.acquire({ ttlMs: 60_000 });
    // Past 0.1's expiries (300 ms from its heartbeats): both leases 0.2 carried on are held still.
    const past = Date.now() + 400;
    await expect.poll(() => Date.now(), { timeout: 2000, interval: 50 }).toBeGreaterThan(past);
    await expect(lockA.acquire({ ttlMs: 5000 })).rejects.toMatchObject({ code: "locked" });
    await expect(lockB.acquire({ ttlMs: 5000 })).rejects.toMatchObject({ code: "locked" });
    expect(await lockB.inspect()).toMatchObject({ held: true, fence: c.fence });
  });

  it("fences keep rising across the upgrade: a 0.2 grant after a 0.1 grant gets a larger fence, even one 0.1 took from a clock an hour ahead", async () => {
    const name = unique("upgrade-fence");
    const ahead = (Date.now() + 3_600_000) * 1000;
    const old = await acquire01(name, "hf_v01_fence", 5000, ahead);
    expect(Number(old.fence)).toBeGreaterThanOrEqual(ahead);
    expect(await release01(name, "hf_v01_fence")).toMatchObject({ status: "ok" });
    // 0.1 deleted its lease's key on release: 0.2 finds only 0.1's fence key, and goes past it.
    expect(await redis.exists(keyOf(name))).toBe(0);
    const lock = new Mutex(redis, name);
    const g = await lock.acquire({ ttlMs: 5000 });
    expect(g.fence).toBeGreaterThan(Number(old.fence));
    await lock.release(g.token);
    expect((await lock.acquire({ ttlMs: 5000 })).fence).toBeGreaterThan(g.fence);
  });

  it("a 0.1 lease that lapsed (its key gone) leaves 0.2 its fence key: the next grant is larger", async () => {
    const name = unique("upgrade-lapse");
    const ahead = (Date.now() + 3_600_000) * 1000;
    const old = await acquire01(name, "hf_v01_lapse", 150, ahead);
    expect(old.status).toBe("granted");
    await expect.poll(() => redis.exists(keyOf(name)), { timeout: 5000, interval: 25 }).toBe(0);
    expect((await new Mutex(redis, name).acquire({ ttlMs: 5000 })).fence).toBeGreaterThan(Number(old.fence));
  });
});
