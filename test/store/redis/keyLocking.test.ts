// Scripts as Upstash runs them: every script asks for key locking on its first
// line, keeps to the keys it names (the gateway has Redis enforce Upstash's
// rule), and a Redis that refuses the flag (stock Redis behind a REST proxy)
// gets the scripts without it, noticed once per client.
import { createHash } from "node:crypto";
import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Mutex, QuorumStore, RedisStore, StoreUnavailableError } from "holdfast";
import { luaScriptSha1, luaScripts, plainScriptSha1 } from "../../../src/store/redis/scripts.generated.js";
import { startLocalStack } from "../../../tools/local-stack/stack.mjs";
import type { LocalStack } from "../../../tools/local-stack/stack.mjs";

const FLAG_LINES = ["#!lua flags=allow-key-locking\n", "#!lua flags=no-writes,allow-key-locking\n"];
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
const clientOf = (stack: LocalStack) => new Redis({ url: stack.url, token: stack.token, retry: false, enableTelemetry: false });

/** The first word of each request's command(s), in order, as sent to the gateway. */
function recordCommands() {
  const sent: string[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body ?? "[]"));
    const commands = Array.isArray(body[0]) ? body : [body];
    for (const c of commands)
      sent.push(`${String(c[0]).toLowerCase()} ${c[0].toLowerCase() === "eval" ? String(c[1]).split("\n")[0] : String(c[1]).slice(0, 8)}`);
    return original(input, init);
  }) as typeof fetch;
  return { sent, restore: () => (globalThis.fetch = original) };
}

describe("every script asks Upstash to lock only its keys", () => {
  it("starts with the allow-key-locking flag line, read-only ones with no-writes too", () => {
    const names = Object.keys(luaScripts) as Array<keyof typeof luaScripts>;
    expect(names.length).toBeGreaterThan(20);
    for (const name of names) {
      expect(
        FLAG_LINES.some((line) => luaScripts[name].startsWith(line)),
        `${name}: ${luaScripts[name].split("\n")[0]}`,
      ).toBe(true);
    }
    expect(luaScripts.mutex_inspect.startsWith(FLAG_LINES[1])).toBe(true);
    expect(luaScripts.mutex_acquire.startsWith(FLAG_LINES[0])).toBe(true);
  });
});

describe("the gateway enforces Upstash's key rule", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(() => stack?.stop());

  it("refuses a flagged script that touches a key outside KEYS, with Upstash's error, and runs the same script unflagged", async () => {
    const redis = clientOf(stack);
    const body = "redis.call('SET', KEYS[1], 'x')\nreturn redis.call('GET', 'not-declared:' .. ARGV[1])";
    await expect(redis.eval(`#!lua flags=allow-key-locking\n${body}`, ["declared"], ["7"])).rejects.toThrow(
      "ERR Dynamic keys are not allowed in Lua scripts when 'allow-key-locking' flag is set. Key was: not-declared:7",
    );
    // Without the flag Upstash takes its database-wide lock and lets the script touch any key.
    await redis.set("not-declared:7", "seen");
    expect(await redis.eval(body, ["declared"], ["7"])).toBe("seen");
    // Declared, the same key is fine; the gateway notes KEYS of two hash tags (Redis Cluster could not run it).
    const twoTags = "#!lua flags=allow-key-locking\nreturn redis.call('GET', KEYS[2])";
    expect(await redis.eval(twoTags, ["{a}declared", "{b}not-declared"], [])).toBeNull();
    expect(stack.gateway.scriptStats().get(createHash("sha1").update(twoTags, "utf8").digest("hex"))).toEqual({
      runs: 1,
      keyRuleRefusals: 0,
      spanningSlots: 1,
    });
  });

  it("keeps a no-writes script from writing, and caches a flagged script by the digest of the text sent", async () => {
    const redis = clientOf(stack);
    await expect(redis.eval("#!lua flags=no-writes,allow-key-locking\nreturn redis.call('SET', KEYS[1], 'x')", ["ro"], [])).rejects.toThrow(
      /Write commands are not allowed from read-only scripts/,
    );
    const text = "#!lua flags=allow-key-locking\nreturn redis.call('INCR', KEYS[1])";
    const sha = await redis.scriptLoad(text);
    expect(sha).toBe(createHash("sha1").update(text, "utf8").digest("hex"));
    expect(await redis.scriptExists(sha)).toEqual([1]);
    const key = unique("counter");
    expect(await redis.evalsha(sha, [key], [])).toBe(1);
    expect(await redis.evalsha(sha, [key], [])).toBe(2);
    // The same inside a transaction (/multi-exec): each of EXEC's replies in Upstash's form.
    const inTx = "#!lua flags=allow-key-locking\nreturn redis.call('INCRBY', KEYS[1], 10)";
    const [loaded, ran] = (await redis.multi().scriptLoad(inTx).evalsha(sha, [key], []).exec()) as [string, number];
    expect(loaded).toBe(createHash("sha1").update(inTx, "utf8").digest("hex"));
    expect(ran).toBe(3);
    expect(await redis.evalsha(loaded, [key], [])).toBe(13);
  });

  it("answers an oversize request and a spent quota as Upstash does; the library calls the quota an outage", async () => {
    const limited = await startLocalStack({ gateway: { maxRequestBytes: 4096, requestLimit: 2 } });
    try {
      const redis = clientOf(limited);
      await expect(redis.set("big", "x".repeat(5000))).rejects.toThrow("ERR max request size exceeded");
      await redis.set("small", "x");
      await redis.get("small");
      await expect(redis.get("small")).rejects.toThrow("ERR max requests limit exceeded.");
      await expect(new Mutex(redis, unique("quota")).acquire({ ttlMs: 1000 })).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await limited.stop();
    }
  });

  it("runs every script of every kind within its KEYS, all of one hash tag", async () => {
    const redis = clientOf(stack);
    const store = new RedisStore(redis);
    const ref = (kind: string) => ({ ns: "key-rule", name: unique(kind) });
    const requestId = () => unique("rq");

    const mx = ref("mx");
    const held = await store.mutex.acquire(mx, { token: "t1", mode: "new", ttlMs: 5000, requestId: requestId(), watch: true });
    expect(held.status).toBe("granted");
    await store.mutex.acquire(mx, { token: "t1", mode: "reenter", ttlMs: 5000, requestId: requestId(), watch: true });
    await store.mutex.acquire(mx, { token: "t2", mode: "queue", ttlMs: 5000, requestId: requestId(), watch: false, more: true });
    await store.mutex.heartbeat(mx, { token: "t1" });
    await store.mutex.inspect(mx);
    await store.mutex.watch(mx, { fence: 1, token: "t1" });
    await store.mutex.release(mx, { token: "t1", requestId: requestId() });
    await store.mutex.release(mx, { token: "t1", requestId: requestId() });
    await store.mutex.withdraw(mx, { token: "t2", reason: "left" });
    const forced = ref("mx");
    await store.mutex.acquire(forced, { token: "t3", mode: "new", ttlMs: 5000, requestId: requestId(), watch: true });
    expect((await store.mutex.release(forced, { token: "", requestId: requestId(), force: {} })).status).toBe("ok");
    const alone = ref("mx");
    await store.mutex.acquire(alone, { token: "t4", mode: "new", ttlMs: 5000, requestId: requestId(), watch: false });
    expect((await store.mutex.release(alone, { token: "t4", requestId: requestId(), expectUnwatched: true })).status).toBe("ok");

    for (const [kind, ops] of [
      ["rw", store.rwlock],
      ["sem", store.semaphore],
    ] as const) {
      const r = ref(kind);
      const acquire =
        kind === "rw"
          ? store.rwlock.acquire(r, { token: "a", mode: "read", reenter: false, ttlMs: 5000, watch: true, requestId: requestId() })
          : store.semaphore.acquire(r, { token: "a", limit: 2, permits: 1, ttlMs: 5000, watch: true });
      expect((await acquire).status).toBe("granted");
      if (kind === "rw") await store.rwlock.admit(r, [{ token: "b", mode: "write", ttlMs: 5000, watch: false, markPickup: true }], false);
      else await store.semaphore.admit(r, [{ token: "b", limit: 2, permits: 1, ttlMs: 5000, watch: false, markPickup: true }], false);
      await ops.heartbeat(r, { token: "a" });
      await ops.inspect(r);
      await ops.watch(r, { fence: 1, token: "a" });
      await ops.withdraw(r, { token: "b", reason: "left" });
      await ops.ungate(r);
      if (kind === "rw") await store.rwlock.release(r, { token: "a", mode: "any", requestId: requestId() });
      else await store.semaphore.release(r, { token: "a", requestId: requestId() });
      const again =
        kind === "rw"
          ? store.rwlock.acquire(r, { token: "c", mode: "read", reenter: false, ttlMs: 5000, watch: true, requestId: requestId() })
          : store.semaphore.acquire(r, { token: "c", limit: 2, permits: 1, ttlMs: 5000, watch: true });
      expect((await again).status).toBe("granted");
      expect((await ops.forceRelease(r, { requestId: requestId() })).status).toBe("ok");
    }

    const key = ref("idem");
    const started = await store.idempotency.begin(key, { token: "w1", ttlMs: 5000, retainMs: 60_000, requestId: requestId() });
    expect(started.status).toBe("started");
    await store.idempotency.heartbeat(key, { token: "w1" });
    await store.idempotency.inspect(key);
    expect((await store.idempotency.inspectWaiting(key)).state).toBe("started"); // marks the start (a write)
    await store.idempotency.watch(key, { fence: 1 });
    await store.idempotency.complete(key, { token: "w1", responseJson: "{}", requestId: requestId() });
    const other = ref("idem");
    await store.idempotency.begin(other, { token: "w2", ttlMs: 5000, retainMs: 60_000, requestId: requestId() });
    await store.idempotency.fail(other, { token: "w2", requestId: requestId() });

    // A flow limit's own scripts (its heartbeat, watch, withdraw, ungate and force release are the many-holder kinds').
    const flow = ref("flow");
    const limit = { concurrency: 2, rate: { count: 5, perMs: 1000 } };
    expect((await store.flow.acquire(flow, { token: "f1", ...limit, ttlMs: 5000, watch: false })).status).toBe("granted");
    await store.flow.admit(flow, [{ token: "f2", ...limit, ttlMs: 5000, watch: false, markPickup: true }], false);
    await store.flow.inspect(flow);
    expect((await store.flow.release(flow, { token: "f1", requestId: requestId() })).status).toBe("ok");

    // An election's own script (its others are the mutex's, run on its keys).
    const el = ref("el");
    const leader = await store.election.acquire(el, { token: "l1", mode: "new", ttlMs: 5000, requestId: requestId(), watch: false, holder: "v" });
    expect(leader.status).toBe("granted");
    expect((await store.election.proclaim(el, { token: "l1", value: "w" })).status).toBe("ok");
    expect((await store.election.observe(el, { since: 0 })).changes).toHaveLength(2);

    // The quorum's second step (raise_fence), over three clients of the same database.
    const quorum = new QuorumStore([clientOf(stack), clientOf(stack), clientOf(stack)]);
    expect((await quorum.mutex.acquire(ref("q"), { token: "q1", mode: "new", ttlMs: 5000, requestId: requestId(), watch: false })).status).toBe(
      "granted",
    );

    const stats = stack.gateway.scriptStats();
    for (const [name, sha] of Object.entries(luaScriptSha1)) {
      const s = stats.get(sha);
      expect(s?.runs ?? 0, `${name} never ran through the gateway`).toBeGreaterThan(0);
      expect(s, name).toMatchObject({ keyRuleRefusals: 0, spanningSlots: 0 });
    }
  });
});

describe("stock Redis behind a REST proxy refuses the flag", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ gateway: { scripts: "verbatim" } });
  });
  afterAll(() => stack?.stop());

  it("refuses a flagged script with Redis's own error", async () => {
    await expect(clientOf(stack).eval("#!lua flags=allow-key-locking\nreturn 1", [], [])).rejects.toThrow(
      "Unexpected flag in script shebang: allow-key-locking",
    );
  });

  it("the library notices once per client and sends scripts without the flag from then on", async () => {
    const redis = clientOf(stack);
    const rec = recordCommands();
    try {
      const lock = new Mutex(redis, unique("plain"));
      const grant = await lock.acquire({ ttlMs: 5000 });
      // EVALSHA of the flagged script (unknown), its EVAL (refused), then the plain script.
      expect(rec.sent).toEqual([`evalsha ${luaScriptSha1.mutex_acquire.slice(0, 8)}`, "eval #!lua flags=allow-key-locking", "eval "]);
      rec.sent.length = 0;
      await lock.release(grant.token);
      await new Mutex(redis, unique("plain")).acquire({ ttlMs: 5000 });
      expect(rec.sent).toEqual([
        `evalsha ${plainScriptSha1.mutex_release_unwatched.slice(0, 8)}`,
        "eval ",
        `evalsha ${plainScriptSha1.mutex_acquire.slice(0, 8)}`,
      ]);
      // Cached now: one round trip each, as on Upstash.
      rec.sent.length = 0;
      const again = new Mutex(redis, unique("plain"));
      await again.release((await again.acquire({ ttlMs: 5000 })).token);
      expect(rec.sent).toEqual([
        `evalsha ${plainScriptSha1.mutex_acquire.slice(0, 8)}`,
        `evalsha ${plainScriptSha1.mutex_release_unwatched.slice(0, 8)}`,
      ]);
    } finally {
      rec.restore();
    }
  });
});
