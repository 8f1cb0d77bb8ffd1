import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import {
  InternalError,
  InvalidInputError,
  LeaseLostError,
  LockedError,
  Mutex,
  NotConfiguredError,
  RedisStore,
  StoreUnavailableError,
} from "holdfast";
import { FENCE_KEEP_MS, MUTEX_KEEP_MS } from "../../src/limits";
import { startLocalStack } from "../../tools/local-stack/stack.mjs";
import type { LocalStack } from "../../tools/local-stack/stack.mjs";

/**
 * The library as an app uses it: `import { Mutex } from "holdfast"` over a
 * real @upstash/redis client, against a real redis-server behind the
 * project's Upstash gateway. Round trips are counted at fetch, the only way
 * the client talks to Upstash.
 */
const sharedRedis = () => new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") });
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** The command of one request; with auto-pipelining a request is a one-command pipeline. */
function command(body: string): string {
  const parsed = JSON.parse(body);
  const commands = Array.isArray(parsed[0]) ? parsed : [parsed];
  expect(commands).toHaveLength(1);
  return String(commands[0][0]).toLowerCase();
}

function countFetches() {
  const original = globalThis.fetch;
  const counter = { requests: [] as string[] };
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    counter.requests.push(String(init?.body ?? ""));
    return original(input, init);
  }) as typeof fetch;
  return { counter, restore: () => (globalThis.fetch = original) };
}

describe("Mutex over @upstash/redis", () => {
  it("names what is missing at once when the client has no URL or no token, not after the store's deadline", async () => {
    const started = Date.now();
    const noUrl = await new Mutex(new Redis({ url: "", token: "" }), unique("no-url")).acquire({ ttlMs: 1000 }).catch((err) => err);
    expect(noUrl).toBeInstanceOf(NotConfiguredError);
    expect(noUrl.message).toMatch(/no URL: set UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN/);
    const noToken = await new Mutex(new Redis({ url: inject("upstashUrl"), token: "" }), unique("no-token"))
      .acquire({ ttlMs: 1000 })
      .catch((err) => err);
    expect(noToken).toBeInstanceOf(NotConfiguredError);
    expect(noToken.message).toMatch(/no token: set UPSTASH_REDIS_REST_TOKEN/);
    // As the README's samples make it, Redis.fromEnv() with the token unset (it warns, then sends "Bearer undefined").
    const saved = { url: process.env.UPSTASH_REDIS_REST_URL, token: process.env.UPSTASH_REDIS_REST_TOKEN };
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    process.env.UPSTASH_REDIS_REST_URL = inject("upstashUrl");
    delete process.env.UPSTASH_REDIS_REST_TOKEN;
    const fromEnv = (() => {
      try {
        return Redis.fromEnv();
      } finally {
        warn.mockRestore();
        for (const [name, value] of [
          ["UPSTASH_REDIS_REST_URL", saved.url],
          ["UPSTASH_REDIS_REST_TOKEN", saved.token],
        ] as const) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
      }
    })();
    const unsetToken = await new Mutex(fromEnv, unique("unset-token")).acquire({ ttlMs: 1000 }).catch((err) => err);
    expect(unsetToken).toBeInstanceOf(NotConfiguredError);
    expect(unsetToken.message).toMatch(/no token: set UPSTASH_REDIS_REST_TOKEN/);
    // No network was waited for (the store's deadline is 2000 ms).
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("says a wrong token was refused, naming the setting, and shows no script, key or token", async () => {
    const name = unique("wrong-token");
    const refused = await new Mutex(new Redis({ url: inject("upstashUrl"), token: "not-the-token" }), name)
      .acquire({ ttlMs: 1000 })
      .catch((err) => err);
    expect(refused).toBeInstanceOf(NotConfiguredError);
    expect(refused.message).toMatch(/refused its credentials .*Unauthorized.*check the Redis client's token \(UPSTASH_REDIS_REST_TOKEN\)/);
    expect(refused.message).not.toMatch(/evalsha|command was|hf:\{|not-the-token/i);
  });

  it("keeps a holder label: inspect shows it, and a caller turned away learns who holds it and until when", async () => {
    const name = unique("label");
    const lock = new Mutex(sharedRedis(), name);
    const grant = await lock.acquire({ ttlMs: 5000, holder: "billing-worker@host-2 pid 77" });
    expect((await lock.inspect()).holder).toBe("billing-worker@host-2 pid 77");
    const refused = await new Mutex(sharedRedis(), name).acquire({ ttlMs: 5000 }).catch((err) => err);
    expect(refused).toBeInstanceOf(LockedError);
    expect(refused.current).toEqual({ holder: "billing-worker@host-2 pid 77", expiresAt: grant.expiresAt });
    await expect(lock.acquire({ ttlMs: 5000, holder: "bad\nlabel" })).rejects.toMatchObject({ code: "invalid_holder" });
    await lock.release(grant.token);
  });

  it("a caller that waited and was still turned away learns who holds it too", async () => {
    const name = unique("label-wait");
    const lock = new Mutex(sharedRedis(), name);
    const grant = await lock.acquire({ ttlMs: 5000, holder: "nightly-report" });
    const refused = await new Mutex(sharedRedis(), name).acquire({ ttlMs: 5000, waitMs: 120 }).catch((err) => err);
    expect(refused).toBeInstanceOf(LockedError);
    expect(refused.current).toEqual({ holder: "nightly-report", expiresAt: grant.expiresAt });
    await lock.release(grant.token);
  });

  it("acquires, re-enters, heartbeats and releases", async () => {
    const lock = new Mutex(sharedRedis(), unique("lib"));
    const grant = await lock.acquire({ ttlMs: 5000 });
    expect(grant.count).toBe(1);
    await expect(lock.acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
    expect((await lock.acquire({ ttlMs: 5000, token: grant.token })).count).toBe(2);
    expect((await lock.heartbeat(grant.token, 9000)).ttlMs).toBe(9000);
    expect(await lock.release(grant.token)).toMatchObject({ released: false, count: 1 });
    expect(await lock.release(grant.token)).toMatchObject({ released: true, count: 0 });
    await expect(lock.release(grant.token)).rejects.toBeInstanceOf(LeaseLostError);
  });

  it("withLock releases even when the work throws", async () => {
    const lock = new Mutex(sharedRedis(), unique("with"));
    await expect(lock.withLock({ ttlMs: 5000 }, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect((await lock.inspect()).held).toBe(false);
  });

  it("waitMs polls until the holder releases", async () => {
    const name = unique("poll");
    const holder = await new Mutex(sharedRedis(), name).acquire({ ttlMs: 5000 });
    setTimeout(() => void new Mutex(sharedRedis(), name).release(holder.token), 200);
    const next = await new Mutex(sharedRedis(), name).acquire({ ttlMs: 5000, waitMs: 3000 });
    expect(next.fence).toBeGreaterThan(holder.fence);
  });

  it("takes a waitMs past the service's 60 s (one wait rule with the SDK) and gets the lock when it is freed", async () => {
    const name = unique("long-wait");
    const holder = await new Mutex(sharedRedis(), name).acquire({ ttlMs: 5000 });
    setTimeout(() => void new Mutex(sharedRedis(), name).release(holder.token), 200);
    const next = await new Mutex(sharedRedis(), name).acquire({ ttlMs: 5000, waitMs: 10 * 60_000 });
    expect(next.fence).toBeGreaterThan(holder.fence);
  });

  it("a stored fence at 2^53 or past it (0.1's fence key, read where the hash keeps none) is an InternalError, never a grant whose fence did not go up; the key is left as it was", async () => {
    const name = unique("fence-max");
    // Replies as Redis sent them (the default client would parse "9007199254740993" into a double).
    const redis = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken"), automaticDeserialization: false });
    const key = `hf:{mx:lib:${name}}:fence`;
    // As text: past 2^53 a double cannot tell this fence from the next one.
    await redis.eval("return redis.call('SET', KEYS[1], ARGV[1])", [key], ["9007199254740993"]);
    const lock = new Mutex(redis, name, { namespace: "lib" });
    await expect(lock.acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(InternalError);
    expect(await redis.eval("return redis.call('GET', KEYS[1])", [key], [])).toBe("9007199254740993");
  });

  it("namespaces keep the same name apart", async () => {
    const name = unique("ns");
    await new Mutex(sharedRedis(), name, { namespace: "a" }).acquire({ ttlMs: 5000 });
    expect((await new Mutex(sharedRedis(), name, { namespace: "b" }).acquire({ ttlMs: 5000 })).count).toBe(1);
  });
});

describe("fences keep rising when Redis lost its last fence and its clock went back", () => {
  // The whole fault (Redis's clock moved back, with FLUSHALL) runs in `npm run chaos`; this shows
  // the rule it relies on: the caller's clock is a floor for new fences, capped a day ahead of Redis's.
  it("a caller's clock ahead of Redis's raises the next fence to it, and a clock days ahead no further than a day", async () => {
    const redis = sharedRedis();
    const lock = new Mutex(redis, unique("floor"));
    const realNow = Date.now();
    vi.useFakeTimers({ toFake: ["Date"], now: realNow + 3_600_000 });
    try {
      const g = await lock.acquire({ ttlMs: 5000 });
      expect(g.fence).toBeGreaterThanOrEqual((realNow + 3_600_000) * 1000);
      await lock.release(g.token);
      await redis.del(`hf:{mx:default:${lock.name}}`); // the mutex's hash, with its last fence, is lost
      vi.setSystemTime(realNow + 3 * 86_400_000);
      const h = await lock.acquire({ ttlMs: 5000 });
      expect(h.fence).toBeGreaterThan(g.fence);
      expect(h.fence).toBeLessThan((Date.now() - 2 * 86_400_000 + 60_000) * 1000); // Redis's now + 1 day, not the caller's 3
      await lock.release(h.token);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("one round trip per operation, EVAL when the script cache is empty", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack(); // its own redis: SCRIPT FLUSH must not disturb other tests
  });
  afterAll(async () => {
    await stack.stop();
  });

  it("uses EVALSHA once cached, and falls back to EVAL after SCRIPT FLUSH", async () => {
    const redis = new Redis({ url: stack.url, token: stack.token });
    const lock = new Mutex(redis, unique("rt"));
    // Load every script once (a cold cache costs EVALSHA + EVAL, shown below).
    const warm = await lock.acquire({ ttlMs: 5000 });
    await lock.heartbeat(warm.token);
    await lock.inspect();
    await lock.release(warm.token);

    const { counter, restore } = countFetches();
    try {
      const grant = await lock.acquire({ ttlMs: 5000 });
      await lock.heartbeat(grant.token);
      await lock.inspect();
      await lock.release(grant.token);
      expect(counter.requests).toHaveLength(4);
      expect(counter.requests.map(command)).toEqual(["evalsha", "evalsha", "evalsha", "evalsha"]);

      await redis.scriptFlush();
      counter.requests.length = 0;
      const again = await lock.acquire({ ttlMs: 5000 });
      expect(again.count).toBe(1);
      expect(counter.requests.map(command)).toEqual(["evalsha", "eval"]);
      counter.requests.length = 0;
      await lock.release(again.token);
      expect(counter.requests.map(command)).toEqual(["evalsha", "eval"]);
    } finally {
      restore();
    }
  });

  it("a hung Redis fails the call within the store deadline", async () => {
    const store = new RedisStore(new Redis({ url: stack.url, token: stack.token, retry: false }), { timeoutMs: 500 });
    const lock = new Mutex(store, unique("hung"));
    stack.redis.pause();
    try {
      const started = Date.now();
      await expect(lock.acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      stack.redis.resume();
    }
  });
});

describe("bad input to the library changes nothing and names the field", () => {
  const redis = sharedRedis();
  const lockKey = (ns: string, name: string) => `hf:{mx:${ns}:${name}}`;

  for (const [label, options, code] of [
    ["a fractional ttlMs", { ttlMs: 1500.5 }, "invalid_ttl"],
    ["a negative ttlMs", { ttlMs: -1 }, "invalid_ttl"],
    ["a huge ttlMs", { ttlMs: 1e12 }, "invalid_ttl"],
    ["ttlMs below 100", { ttlMs: 99 }, "invalid_ttl"],
    ["ttlMs as a string", { ttlMs: "1000" as unknown as number }, "invalid_ttl"],
    ["waitMs past the longest timer", { ttlMs: 1000, waitMs: 2_147_483_648 }, "invalid_wait"],
    ["a negative waitMs", { ttlMs: 1000, waitMs: -5 }, "invalid_wait"],
    ["an empty token", { ttlMs: 1000, token: "" }, "invalid_token"],
    ["a token of 200 three-byte characters (600 bytes)", { ttlMs: 1000, token: "€".repeat(200) }, "invalid_token"],
    ["no options at all", undefined, "invalid_ttl"],
    ["null for options", null, "invalid_ttl"],
    ["a number for options", 5000, "invalid_ttl"],
  ] as const) {
    it(`acquire with ${label} throws InvalidInputError ${code}, and the lock stays free`, async () => {
      const name = unique("bad");
      const lock = new Mutex(redis, name);
      expect(lock.name).toBe(name);
      const err = await lock.acquire(options as never).catch((e) => e);
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err.code).toBe(code);
      expect(await redis.exists(lockKey("default", name))).toBe(0);
      expect((await lock.acquire({ ttlMs: 5000 })).count).toBe(1); // not stuck: no key without an expiry
    });
  }

  it("names and namespaces outside the contract's patterns are refused before any key is made", () => {
    for (const name of ["a b", "a{b}", "", "x".repeat(201), "a/b", ".", ".."]) {
      expect(() => new Mutex(redis, name)).toThrow(expect.objectContaining({ code: "invalid_name" }));
    }
    for (const name of ["...", ".a", "a.."]) expect(new Mutex(redis, name)).toBeInstanceOf(Mutex); // only the two path steps are refused
    for (const namespace of ["a:b", "a{b", "a}b", "", "x".repeat(65), "a b"]) {
      expect(() => new Mutex(redis, "c", { namespace })).toThrow(expect.objectContaining({ code: "invalid_namespace" }));
    }
  });

  it("two different (namespace, name) pairs never share a lock: the collision of ns 'a:b' + 'c' with ns 'a' + 'b:c' cannot be made", async () => {
    const suffix = unique("x");
    const one = new Mutex(redis, `b:c-${suffix}`, { namespace: "a" });
    await one.acquire({ ttlMs: 5000 });
    // The only namespace that would collide with it needs a ":", which is refused.
    expect(() => new Mutex(redis, `c-${suffix}`, { namespace: "a:b" })).toThrow(InvalidInputError);
    // Look-alike pairs that are allowed are different locks.
    expect((await new Mutex(redis, `c-${suffix}`, { namespace: "a-b" }).acquire({ ttlMs: 5000 })).count).toBe(1);
    expect((await new Mutex(redis, `b-c-${suffix}`, { namespace: "a" }).acquire({ ttlMs: 5000 })).count).toBe(1);
  });

  it("every grant leaves the lock's key with an expiry (PTTL > 0), re-entry and handoff-free release included", async () => {
    const name = unique("pttl");
    const lock = new Mutex(redis, name);
    const g = await lock.acquire({ ttlMs: 3000 });
    expect(await redis.pttl(lockKey("default", name))).toBeGreaterThan(0);
    await lock.acquire({ ttlMs: 4000, token: g.token });
    expect(await redis.pttl(lockKey("default", name))).toBeGreaterThan(3000);
    await lock.heartbeat(g.token, 5000);
    expect(await redis.pttl(lockKey("default", name))).toBeGreaterThan(4000);
    await lock.release(g.token);
    expect(await redis.pttl(lockKey("default", name))).toBeGreaterThan(0);
    await lock.release(g.token); // the outer level: now free
    // The released mutex's hash keeps its last fence, past the fence's keep time, for at most MUTEX_KEEP_MS.
    expect(await redis.hget(lockKey("default", name), "owner")).toBe(""); // released: owner "" and exp "0" (lua/mutex/release.lua)
    expect(await redis.pttl(lockKey("default", name))).toBeGreaterThan(FENCE_KEEP_MS);
    expect(await redis.pttl(lockKey("default", name))).toBeLessThanOrEqual(MUTEX_KEEP_MS);
  });

  it("a script given a bad argument (bypassing the library) fails before its first write: a bug, not an outage, and no key", async () => {
    const store = new RedisStore(redis);
    const name = unique("script-args");
    const err = await store.mutex
      .acquire({ ns: "default", name }, { token: "hf_x", mode: "new", ttlMs: 1500.5, requestId: "rq_1", watch: false })
      .catch((e) => e);
    expect(err).toBeInstanceOf(InternalError);
    expect(err.message).toMatch(/ttlMs must be an integer/);
    expect(await redis.keys(`${lockKey("default", name)}*`)).toEqual([]);
  });

  it("busy and lost answers are not remembered: 30 refused try-locks and stale releases leave no request keys", async () => {
    const name = unique("no-memory");
    const lock = new Mutex(redis, name);
    const held = await lock.acquire({ ttlMs: 5000 });
    for (let i = 0; i < 30; i++) {
      await expect(lock.acquire({ ttlMs: 1000 })).rejects.toBeInstanceOf(LockedError);
      await expect(lock.release("hf_not-the-holder")).rejects.toBeInstanceOf(LeaseLostError);
    }
    expect(await redis.keys(`${lockKey("default", name)}:rq:*`)).toEqual([]);
    await lock.release(held.token);
  });
});
