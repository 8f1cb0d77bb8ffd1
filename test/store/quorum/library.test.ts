import { Redis } from "@upstash/redis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  InvalidInputError,
  LeaseLostError,
  LockedError,
  Mutex,
  NotSupportedError,
  QuorumStore,
  RedisStore,
  Semaphore,
  StoreUnavailableError,
  Idempotency,
} from "holdfast";
import { startLocalStack } from "../../../tools/local-stack/stack.mjs";
import type { LocalStack } from "../../../tools/local-stack/stack.mjs";
import { unique } from "../../support/library.js";
import { pollUntil } from "../../support/pollUntil.js";

/**
 * The quorum (Redlock) over three real redis-servers, each behind its own
 * Upstash gateway, through real @upstash/redis clients. Nodes are taken down
 * for real: stopped (connections refused) or paused with SIGSTOP (no answer).
 */
// Each node's deadline: a paused node costs it per call, and 600 ms was passed by live nodes at load 12.
const TIMEOUT_MS = 1500;
let stacks: LocalStack[];
const clients = () => stacks.map((s) => new Redis({ url: s.url, token: s.token, retry: { retries: 1, backoff: () => 20 } }));
const quorum = () => new QuorumStore(clients(), { timeoutMs: TIMEOUT_MS });
/** One database on its own, to look at what the quorum left there. */
const node = (i: number) => new RedisStore(new Redis({ url: stacks[i].url, token: stacks[i].token }));
const ref = (name: string) => ({ ns: "default", name });

beforeAll(async () => {
  stacks = await Promise.all([startLocalStack(), startLocalStack(), startLocalStack()]);
  // Each node warmed by one mutex taken and given back on it alone (its gateway's first requests, the scripts
  // loaded after a NOSCRIPT): a fresh node's first call took over TIMEOUT_MS on a busy runner (load 9, three
  // test files at once), and no case here is about a cold node.
  await Promise.all(
    stacks.map(async (_, i) => {
      const warm = new Mutex(node(i), unique("q-warm"));
      await warm.release((await warm.acquire({ ttlMs: 5000 })).token);
    }),
  );
});
afterAll(async () => {
  await Promise.all(stacks.map((s) => s.stop()));
});
afterEach(async () => {
  // Every node up again for the next test (restart drops its data: nothing is shared between tests).
  for (const s of stacks) {
    s.redis.resume();
    if (
      !(await node(stacks.indexOf(s))
        .ping()
        .then(
          () => true,
          () => false,
        ))
    )
      await s.redis.restart();
  }
});

describe("QuorumStore: the mutex on a majority of three Redis databases", () => {
  it("grants on all three, refuses a second holder, and each new grant has a larger fence", async () => {
    const name = unique("q");
    const lock = new Mutex(quorum(), name);
    const a = await lock.acquire({ ttlMs: 5000 });
    const states = await Promise.all([0, 1, 2].map((i) => node(i).mutex.inspect(ref(name))));
    expect(states.every((s) => s.held)).toBe(true);
    // A majority carries the grant's fence as the agreed one; each database's own is never above it, unless it answered after the decision.
    expect(states.filter((s) => s.quorumFence === a.fence).length).toBeGreaterThanOrEqual(2);
    expect(states.every((s) => s.quorumFence === undefined || s.quorumFence === a.fence)).toBe(true);
    await expect(lock.acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
    expect((await lock.heartbeat(a.token)).fence).toBe(a.fence);
    expect((await lock.release(a.token)).released).toBe(true);
    const b = await lock.acquire({ ttlMs: 5000 });
    expect(b.fence).toBeGreaterThan(a.fence);
    await lock.release(b.token);
    await expect(lock.release(b.token)).rejects.toBeInstanceOf(LeaseLostError);
  });

  it("answers a validity, not the TTL: expiresAt is no later than the acquire's start + TTL less the drift allowance", async () => {
    const lock = new Mutex(quorum(), unique("q-valid"));
    const before = Date.now();
    const g = await lock.acquire({ ttlMs: 10_000 });
    const took = Date.now() - before;
    // drift = 1 % of the TTL + 2 ms = 102 ms; the databases' own clocks may take up to the acquire's time off it.
    // The quorum reads its own start a moment after `before` (a millisecond tick or two later on a busy machine).
    expect(g.expiresAt).toBeLessThanOrEqual(before + 2 + 10_000 - 102);
    expect(g.expiresAt).toBeGreaterThanOrEqual(before + 10_000 - 102 - took - 1);
    await lock.release(g.token);
  });

  it("keeps working with one of three databases stopped: acquire, heartbeat, release, larger fences, no error", async () => {
    const name = unique("q-one-down");
    const lock = new Mutex(quorum(), name);
    const first = await lock.acquire({ ttlMs: 5000 });
    await lock.release(first.token);
    await stacks[2].redis.stop();
    let last = first.fence;
    for (let k = 0; k < 5; k++) {
      const g = await lock.acquire({ ttlMs: 5000 });
      expect(g.fence).toBeGreaterThan(last);
      last = g.fence;
      await expect(lock.acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
      await lock.heartbeat(g.token);
      expect((await lock.release(g.token)).released).toBe(true);
    }
  });

  it("with one database paused (no answers at all) a grant comes from the other two without waiting for it", async () => {
    const lock = new Mutex(quorum(), unique("q-paused"));
    stacks[1].redis.pause();
    const started = Date.now();
    const g = await lock.acquire({ ttlMs: 5000 });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    await lock.heartbeat(g.token);
    await lock.release(g.token);
  });

  it("with two of three stopped: StoreUnavailableError within the bound, and nothing left held on the one that answers", async () => {
    const name = unique("q-two-down");
    const lock = new Mutex(quorum(), name);
    await stacks[0].redis.stop();
    await stacks[1].redis.stop();
    const started = Date.now();
    const err = await lock.acquire({ ttlMs: 5000 }).catch((e) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(err.message).toMatch(/1 of 3 Redis nodes answered, a majority is 2/);
    expect(Date.now() - started).toBeLessThan(2 * TIMEOUT_MS + 500);
    expect(await node(2).mutex.inspect(ref(name))).toMatchObject({ held: false });
  });

  it("with two of three paused: StoreUnavailableError within the bound, not a hang", async () => {
    const lock = new Mutex(quorum(), unique("q-two-paused"));
    stacks[0].redis.pause();
    stacks[1].redis.pause();
    const started = Date.now();
    await expect(lock.acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(2 * TIMEOUT_MS + 500);
  });

  it("a grant on a minority is given back: busy, and the database that granted is free again", async () => {
    const name = unique("q-minority");
    // Another holder has the lock on databases 1 and 2 (as after a partition), database 0 is free.
    for (const i of [1, 2])
      await node(i).mutex.acquire(ref(name), { token: "hf_other-holder-token", mode: "new", ttlMs: 5000, requestId: "rq_x", watch: false });
    await expect(new Mutex(quorum(), name).acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
    expect(await node(0).mutex.inspect(ref(name))).toMatchObject({ held: false });
  });

  it("no later grant has a smaller fence, even when the database that issued the largest one is gone", async () => {
    const name = unique("q-fence");
    // Database 0 issues fences far ahead of the others (as a clock running ahead would).
    const r0 = new Redis({ url: stacks[0].url, token: stacks[0].token });
    await r0.set(`hf:{mx:default:${name}}:fence`, String(Date.now() * 1000 + 3_600_000_000));
    const lock = new Mutex(quorum(), name);
    const a = await lock.acquire({ ttlMs: 5000 });
    await lock.release(a.token);
    await stacks[0].redis.stop(); // the next majority is databases 1 and 2 only
    const b = await lock.acquire({ ttlMs: 5000 });
    expect(b.fence).toBeGreaterThan(a.fence);
    await lock.release(b.token);
  });

  it("a re-entry counts on the majority, and the lock is free only once a majority dropped every level", async () => {
    const lock = new Mutex(quorum(), unique("q-reenter"));
    const g = await lock.acquire({ ttlMs: 5000 });
    expect((await lock.acquire({ ttlMs: 5000, token: g.token })).count).toBe(2);
    expect(await lock.release(g.token)).toMatchObject({ released: false, count: 1 });
    expect(await lock.release(g.token)).toMatchObject({ released: true });
    expect((await lock.inspect()).held).toBe(false);
  });

  it("a retried acquire that finds its older grant on a majority promises no more than that grant's own expiry", async () => {
    const name = unique("q-retry-old");
    const token = "hf_retried-acquire-token";
    const input = { token, mode: "new" as const, ttlMs: 3000, requestId: "rq_first", watch: false };
    // The first try reached databases 0 and 1 (its answer was lost); the retry comes 1.5 s later.
    for (const i of [0, 1]) await node(i).mutex.acquire(ref(name), input);
    await new Promise((r) => setTimeout(r, 1500));
    const r = await quorum().mutex.acquire(ref(name), { ...input, requestId: "rq_retry" });
    expect(r.status).toBe("granted");
    const held = await Promise.all([0, 1].map((i) => node(i).mutex.inspect(ref(name))));
    const soonest = Math.min(...held.map((s) => s.expiresAt ?? 0));
    if (r.status === "granted") expect(r.grant.expiresAt).toBeLessThanOrEqual(soonest);
  });

  it("a token's grant left on one database by an earlier try does not take the new grant's fence below one answered since", async () => {
    const name = unique("q-left-behind");
    const q = quorum();
    const token = "hf_polling-acquire-token";
    const input = { token, mode: "new" as const, ttlMs: 10_000, requestId: "", watch: false };
    // An earlier try of this acquire (the library's polling loop keeps its token) was raised on a majority
    // with fence q; its take-back (a grant confirmed too late) then reached two databases but not the third.
    const first = await q.mutex.acquire(ref(name), input);
    if (first.status !== "granted") throw new Error(`first try: ${first.status}`);
    // Every database has answered that try (the third may still have had it in flight when the majority decided).
    const states = await pollUntil(
      () => Promise.all([0, 1, 2].map((i) => node(i).mutex.inspect(ref(name)))),
      (all) => all.every((s) => s.held),
      10_000,
    );
    const left = states.findIndex((s) => s.quorumFence === first.grant.fence);
    const others = [0, 1, 2].filter((i) => i !== left);
    for (const i of others) await node(i).mutex.release(ref(name), { token, requestId: `rq_take-back-${i}` });
    // Another client takes the lock on the other two, and gives it back.
    const other = new Mutex(q, name);
    const between = await other.acquire({ ttlMs: 10_000 });
    expect(between.fence).toBeGreaterThan(first.grant.fence);
    await other.release(between.token);
    // The next try of the first acquire: the database that kept its grant is in its majority.
    stacks[others[1]].redis.pause();
    const next = await q.mutex.acquire(ref(name), input);
    expect(next.status).toBe("granted");
    if (next.status === "granted") expect(next.grant.fence).toBeGreaterThan(between.fence);
  });

  it("heartbeat, release and inspect report the grant's fence, not one a late database issued on its own", async () => {
    const name = unique("q-late-fence");
    // Databases 0 and 1 issue fences an hour ahead (as clocks running ahead would), so the grant's fence is large.
    for (const i of [0, 1])
      await new Redis({ url: stacks[i].url, token: stacks[i].token }).set(`hf:{mx:default:${name}}:fence`, String(Date.now() * 1000 + 3_600_000_000));
    await stacks[2].redis.stop();
    const lock = new Mutex(quorum(), name);
    const g = await lock.acquire({ ttlMs: 5000 });
    // Database 2 comes back empty and grants the same token late, with a smaller fence of its own.
    await stacks[2].redis.restart();
    await node(2).mutex.acquire(ref(name), { token: g.token, mode: "new", ttlMs: 5000, requestId: "rq_late", watch: false });
    expect((await node(2).mutex.inspect(ref(name))).fence).toBeLessThan(g.fence);
    // Now the answers come from database 1 (agreed fence) and database 2 (its own, smaller).
    await stacks[0].redis.stop();
    expect((await lock.heartbeat(g.token)).fence).toBe(g.fence);
    expect((await lock.inspect()).fence).toBe(g.fence);
    expect(await lock.release(g.token)).toMatchObject({ released: true, fence: g.fence });
  });

  it("a re-entry that reaches only one database is an unknown outcome, not given back; its retry counts once everywhere", async () => {
    const name = unique("q-reenter-partial");
    const q = quorum();
    const lock = new Mutex(q, name);
    const g = await lock.acquire({ ttlMs: 10_000 });
    const reenter = { token: g.token, mode: "reenter" as const, ttlMs: 10_000, requestId: "rq_reenter-once", watch: false };
    stacks[1].redis.pause();
    stacks[2].redis.pause();
    const err = await q.mutex.acquire(ref(name), reenter).catch((e) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(err.outcome).toBe("unknown");
    stacks[1].redis.resume();
    stacks[2].redis.resume();
    const again = await q.mutex.acquire(ref(name), reenter);
    expect(again).toMatchObject({ status: "granted", grant: { count: 2, fence: g.fence } });
    const counts = await Promise.all([0, 1, 2].map(async (i) => (await node(i).mutex.inspect(ref(name))).count));
    expect(counts).toEqual([2, 2, 2]);
    expect(await lock.release(g.token)).toMatchObject({ released: false, count: 1 });
    expect(await lock.release(g.token)).toMatchObject({ released: true });
  });

  it("a release is free for others when a majority freed it, whichever databases answer first", async () => {
    const name = unique("q-levels");
    const lock = new Mutex(quorum(), name);
    const g = await lock.acquire({ ttlMs: 5000 });
    // Levels apart after a partial failure: database 0 holds two levels, databases 1 and 2 one.
    await node(0).mutex.acquire(ref(name), { token: g.token, mode: "reenter", ttlMs: 5000, requestId: "rq_level", watch: false });
    stacks[1].redis.pause(); // database 0 answers first: not freed there
    const releasing = lock.release(g.token);
    await new Promise((r) => setTimeout(r, 100));
    stacks[1].redis.resume();
    expect(await releasing).toMatchObject({ released: true, count: 0 });
    expect((await lock.inspect()).held).toBe(false);
  });

  it("offers the mutex only: the semaphore and idempotency keys say NotSupportedError and write nothing", async () => {
    const q = quorum();
    const name = unique("q-other");
    await expect(new Semaphore(q, name, { limit: 2 }).acquire({ ttlMs: 5000 })).rejects.toBeInstanceOf(NotSupportedError);
    await expect(new Idempotency(q).begin(name, { ttlMs: 5000 })).rejects.toBeInstanceOf(NotSupportedError);
    const keys = await new Redis({ url: stacks[0].url, token: stacks[0].token }).keys(`*${name}*`);
    expect(keys).toEqual([]);
  });

  it("needs an odd number of at least three databases", () => {
    const [a, b, c] = clients();
    expect(() => new QuorumStore([a, b])).toThrow(InvalidInputError);
    expect(() => new QuorumStore([a, b, c, a])).toThrow(/odd number of at least 3/);
    // One client listed twice would answer for two of three: a majority on its own.
    expect(() => new QuorumStore([a, a, c])).toThrow(/each Redis database once/);
  });
});
