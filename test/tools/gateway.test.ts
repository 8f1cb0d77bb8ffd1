// The local Upstash gateway must look like Upstash to the real @upstash/redis client, and
// misbehave like a real store when its Redis is stopped or paused.
import { randomUUID } from "node:crypto";
import { Redis } from "@upstash/redis";
import { afterAll, describe, expect, it, inject } from "vitest";

const url = inject("upstashUrl");
const token = inject("upstashToken");
const controlUrl = inject("stackControlUrl");

// Other test files share this Redis: every key gets a per-file prefix.
const prefix = `gateway-test:${randomUUID()}:`;
const key = (name: string) => prefix + name;

const redis = new Redis({ url, token, retry: false, enableTelemetry: false });

/** POST to the gateway with fetch, to assert exact wire shapes. */
async function raw(
  path: string,
  body: unknown,
  {
    auth = `Bearer ${token}`,
    headers = {},
    base = url,
    signal,
  }: { auth?: string | null; headers?: Record<string, string>; base?: string; signal?: AbortSignal } = {},
) {
  const res = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(auth ? { authorization: auth } : {}), ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal,
  });
  return { status: res.status, json: (await res.json()) as any };
}
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

describe("@upstash/redis client through the gateway", () => {
  it("round-trips strings, non-ASCII text and JSON values", async () => {
    await redis.set(key("s"), "hello");
    expect(await redis.get(key("s"))).toBe("hello");
    await redis.set(key("u"), "héllo wörld ✓ 🚀 日本");
    expect(await redis.get(key("u"))).toBe("héllo wörld ✓ 🚀 日本");
    await redis.set(key("j"), { owner: "ä", n: 3, list: [1, "x"] });
    expect(await redis.get(key("j"))).toEqual({ owner: "ä", n: 3, list: [1, "x"] });
  });

  it("works in plain mode (responseEncoding: false) too", async () => {
    const plain = new Redis({ url, token, retry: false, enableTelemetry: false, responseEncoding: false });
    await plain.set(key("plain"), "ünïcode ✓");
    expect(await plain.get(key("plain"))).toBe("ünïcode ✓");
    expect(await plain.incr(key("plain-n"))).toBe(1);
  });

  it("returns integers, nil and arrays", async () => {
    expect(await redis.incr(key("n"))).toBe(1);
    expect(await redis.incrby(key("n"), 41)).toBe(42);
    expect(await redis.get(key("missing"))).toBeNull();
    await redis.rpush(key("list"), "a", "ß", "c");
    expect(await redis.lrange(key("list"), 0, -1)).toEqual(["a", "ß", "c"]);
    await redis.hset(key("h"), { f1: "v1", f2: "✓" });
    expect(await redis.hgetall(key("h"))).toEqual({ f1: "v1", f2: "✓" });
  });

  it("runs pipelines", async () => {
    const results = await redis.pipeline().set(key("p"), "1").incr(key("p")).get(key("p")).exec();
    expect(results).toEqual(["OK", 2, 2]);
  });

  it("runs multi-exec transactions", async () => {
    const results = await redis.multi().set(key("m"), "a").append(key("m"), "b").get(key("m")).exec();
    expect(results).toEqual(["OK", 2, "ab"]);
  });

  it("surfaces Redis errors with Redis's message", async () => {
    await redis.set(key("not-a-number"), "abc");
    await expect(redis.incr(key("not-a-number"))).rejects.toThrow("ERR value is not an integer or out of range");
  });

  it("handles many concurrent requests", async () => {
    await Promise.all(Array.from({ length: 200 }, () => redis.incr(key("concurrent"))));
    expect(await redis.get(key("concurrent"))).toBe(200);
  });

  it("rejects a client with the wrong token", async () => {
    const wrong = new Redis({ url, token: "wrong", retry: false, enableTelemetry: false });
    await expect(wrong.get(key("x"))).rejects.toThrow("Unauthorized");
  });
});

describe("wire format", () => {
  it("answers {result} with plain strings, and base64 with Upstash-Encoding", async () => {
    expect(await raw("/", ["SET", key("w"), "héllo ✓"])).toEqual({ status: 200, json: { result: "OK" } });
    expect(await raw("/", ["GET", key("w")])).toEqual({ status: 200, json: { result: "héllo ✓" } });
    const base64 = { headers: { "Upstash-Encoding": "base64" } };
    expect(await raw("/", ["SET", key("w"), "héllo ✓"], base64)).toEqual({ status: 200, json: { result: "T0s=" } });
    expect(await raw("/", ["GET", key("w")], base64)).toEqual({ status: 200, json: { result: b64("héllo ✓") } });
    expect(await raw("/", ["INCR", key("wn")], base64)).toEqual({ status: 200, json: { result: 1 } });
    expect(await raw("/", ["GET", key("nothing")], base64)).toEqual({ status: 200, json: { result: null } });
    await raw("/", ["RPUSH", key("wl"), "a", "é"]);
    expect(await raw("/", ["LRANGE", key("wl"), 0, -1], base64)).toEqual({ status: 200, json: { result: [b64("a"), b64("é")] } });
  });

  it("stringifies number and boolean arguments", async () => {
    await raw("/", ["SET", key("num"), 42, "EX", 60]);
    expect((await raw("/", ["GET", key("num")])).json).toEqual({ result: "42" });
    await raw("/", ["SET", key("bool"), true]);
    expect((await raw("/", ["GET", key("bool")])).json).toEqual({ result: "true" });
  });

  it("answers a Redis error with 400 {error}", async () => {
    await raw("/", ["SET", key("e"), "abc"]);
    expect(await raw("/", ["INCR", key("e")])).toEqual({
      status: 400,
      json: { error: "ERR value is not an integer or out of range" },
    });
  });

  it("answers /pipeline with a {result} or {error} per command", async () => {
    const res = await raw("/pipeline", [
      ["SET", key("pl"), "x"],
      ["INCR", key("pl")],
      ["GET", key("pl")],
    ]);
    expect(res).toEqual({
      status: 200,
      json: [{ result: "OK" }, { error: "ERR value is not an integer or out of range" }, { result: "x" }],
    });
  });

  it("answers /multi-exec per command, and with an error when EXEC aborts", async () => {
    expect(
      await raw("/multi-exec", [
        ["SET", key("tx"), "1"],
        ["INCR", key("tx")],
      ]),
    ).toEqual({
      status: 200,
      json: [{ result: "OK" }, { result: 2 }],
    });
    const aborted = await raw("/multi-exec", [["SET", key("tx"), "9"], ["NO-SUCH-COMMAND"]]);
    expect(aborted.status).toBe(400);
    expect(aborted.json.error).toMatch(/^EXECABORT/);
    expect((await raw("/", ["GET", key("tx")])).json).toEqual({ result: "2" }); // nothing applied
  });

  it("answers 401 to a missing or wrong token", async () => {
    expect(await raw("/", ["PING"], { auth: null })).toEqual({ status: 401, json: { error: "Unauthorized" } });
    expect(await raw("/", ["PING"], { auth: "Bearer wrong" })).toEqual({ status: 401, json: { error: "Unauthorized" } });
  });

  it("answers 400 to malformed or wrongly shaped bodies, 404 to unknown paths", async () => {
    for (const [path, body] of [
      ["/", "{not json"],
      ["/", { cmd: "GET" }],
      ["/", []],
      ["/", ["SET", key("bad"), { nested: 1 }]],
      ["/pipeline", ["GET", key("bad")]],
      ["/multi-exec", []],
    ] as const) {
      const res = await raw(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(res.json.error).toEqual(expect.any(String));
    }
    const notFound = await raw("/set/k/v", []);
    expect(notFound.status).toBe(404);
    expect(notFound.json.error).toEqual(expect.any(String));
  });
});

describe("disposable stacks (control server)", () => {
  const created: string[] = [];
  afterAll(async () => {
    await Promise.all(created.map((id) => fetch(`${controlUrl}/stacks/${id}`, { method: "DELETE" })));
  });

  async function newStack() {
    const res = await fetch(`${controlUrl}/stacks`, { method: "POST" });
    const stack = (await res.json()) as { id: string; url: string; token: string };
    created.push(stack.id);
    const control = async (action: string) => {
      const r = await fetch(`${controlUrl}/stacks/${stack.id}/${action}`, { method: "POST" });
      expect(await r.json()).toEqual({ ok: true });
    };
    const client = new Redis({ url: stack.url, token: stack.token, retry: false, enableTelemetry: false });
    return { ...stack, control, client };
  }

  it("runs EVAL/EVALSHA scripts, falling back to EVAL after SCRIPT FLUSH", async () => {
    // Own Redis: SCRIPT FLUSH would otherwise pull scripts out from under other test files.
    const { client } = await newStack();
    const script = client.createScript<string>("return ARGV[1] .. '!'");
    expect(await script.exec([], ["hi"])).toBe("hi!"); // NOSCRIPT on a fresh Redis, then EVAL
    await client.scriptLoad(script.script);
    expect(await script.evalsha([], ["again"])).toBe("again!");
    await client.scriptFlush();
    await expect(script.evalsha([], ["x"])).rejects.toThrow(/NOSCRIPT/);
    expect(await script.exec([], ["back"])).toBe("back!");
  });

  it("fails fast while Redis is down and recovers after a restart", async () => {
    const { client, control } = await newStack();
    await client.set("k", "v");
    await control("redis/stop");
    const started = Date.now();
    await expect(client.get("k")).rejects.toThrow(/ECONNREFUSED/);
    expect(Date.now() - started).toBeLessThan(2000);
    await control("redis/start");
    await client.set("k", "v2"); // no persistence: the restarted Redis starts empty
    expect(await client.get("k")).toBe("v2");
  });

  it("hangs like a slow store while Redis is paused", async () => {
    const { url: stackUrl, token: stackToken, control, client } = await newStack();
    await client.set("k", "v");
    await control("redis/pause");
    try {
      const request = raw("/", ["GET", "k"], { base: stackUrl, auth: `Bearer ${stackToken}`, signal: AbortSignal.timeout(500) });
      await expect(request).rejects.toThrow(expect.objectContaining({ name: "TimeoutError" }));
    } finally {
      await control("redis/resume");
    }
    expect(await client.get("k")).toBe("v");
  });

  it("refuses connections once the gateway is stopped", async () => {
    const { url: stackUrl, control } = await newStack();
    await control("gateway/stop");
    await expect(fetch(stackUrl, { method: "POST", body: "[]" })).rejects.toThrow();
  });
});
