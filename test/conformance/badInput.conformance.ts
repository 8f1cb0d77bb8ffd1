import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { expect, it } from "vitest";
import worker from "../../src/worker";
import { api, KEY_A, type StoreKind, uniqueName } from "../support/workers/api";

/** The contract's error table: every bad input is a 4xx JSON error and changes nothing. */
export function badInputConformance(kind: StoreKind) {
  const { post, get, call, env } = api(kind);

  const bodies: Array<[string, unknown, string]> = [
    ["missing ttlMs", {}, "invalid_ttl"],
    ["ttlMs below 100", { ttlMs: 99 }, "invalid_ttl"],
    ["ttlMs above a day", { ttlMs: 86_400_001 }, "invalid_ttl"],
    ["ttlMs not an integer", { ttlMs: 1000.5 }, "invalid_ttl"],
    ["ttlMs as a string", { ttlMs: "1000" }, "invalid_ttl"],
    ["waitMs above 60 s", { ttlMs: 1000, waitMs: 60_001 }, "invalid_wait"],
    ["negative waitMs", { ttlMs: 1000, waitMs: -1 }, "invalid_wait"],
    ["token of the wrong type", { ttlMs: 1000, token: 5 }, "invalid_token"],
    ["unknown field", { ttlMs: 1000, colour: "red" }, "invalid_body"],
    ["an array", [1000], "invalid_body"],
    ["null", null, "invalid_body"],
    ["onExpire not a URL", { ttlMs: 1000, onExpire: "not a url" }, "invalid_on_expire"],
  ];

  for (const [label, body, code] of bodies) {
    it(`acquire with ${label} is 400 ${code} and changes nothing`, async () => {
      const name = uniqueName("bad");
      const res = await post(`/v1/locks/${name}/acquire`, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(code);
      expect(typeof res.body.message).toBe("string");
      expect((await get(`/v1/locks/${name}`)).body.held).toBe(false);
    });
  }

  it("broken JSON is 400 invalid_body", async () => {
    const name = uniqueName("json");
    const res = await call("POST", `/v1/locks/${name}/acquire`, undefined, { raw: '{"ttlMs": 10' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_body");
    expect((await get(`/v1/locks/${name}`)).body.held).toBe(false);
  });

  it("a body over 64 KiB is 413 too_large", async () => {
    const name = uniqueName("huge");
    const raw = JSON.stringify({ ttlMs: 1000, token: "x".repeat(70 * 1024) });
    const res = await call("POST", `/v1/locks/${name}/acquire`, undefined, { raw });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe("too_large");
  });

  it("a body sent with its Content-Length, as HTTP clients send it, is checked the same: UTF-8, JSON, 64 KiB", async () => {
    const name = uniqueName("sized");
    const send = async (bytes: Uint8Array<ArrayBuffer>, declared = bytes.byteLength) => {
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        new Request(`http://holdfast.test/v1/locks/${name}/acquire`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json", "content-length": String(declared) },
          body: bytes,
        }),
        env,
        ctx,
      );
      const body = (await res.json()) as { error?: string; token?: string };
      await waitOnExecutionContext(ctx);
      return { status: res.status, body };
    };
    const text = (s: string) => new TextEncoder().encode(s);
    // A holder label with a byte that is not UTF-8 (0xff) where an "x" was.
    const broken = text('{"ttlMs":1000,"holder":"x"}');
    broken[broken.indexOf(0x78)] = 0xff;
    expect(await send(broken)).toMatchObject({ status: 400, body: { error: "invalid_body" } });
    expect(await send(text('{"ttlMs": 10'))).toMatchObject({ status: 400, body: { error: "invalid_body" } });
    expect(await send(text(JSON.stringify({ ttlMs: 1000, holder: "x".repeat(70 * 1024) })))).toMatchObject({ status: 413 });
    expect((await get(`/v1/locks/${name}`)).body.held).toBe(false);
    const granted = await send(text('{"ttlMs":1000,"holder":"sized"}'));
    expect(granted.status).toBe(200);
    expect((await get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, holder: "sized" });
  });

  it("heartbeat and release need a token", async () => {
    const name = uniqueName("notoken");
    for (const op of ["heartbeat", "release"]) {
      const res = await post(`/v1/locks/${name}/${op}`, {});
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_token");
    }
  });

  // A token is bounded in bytes (the store's scripts count bytes): 200 characters of 3 bytes each pass a
  // character count but are 600 bytes. Every route that takes a token answers 400, on both stores alike.
  const multiByteToken = "€".repeat(200);
  const tokenRoutes: Array<[string, (name: string) => unknown]> = [
    ["/v1/locks/{name}/acquire", () => ({ ttlMs: 1000, token: multiByteToken })],
    ["/v1/locks/{name}/heartbeat", () => ({ token: multiByteToken })],
    ["/v1/locks/{name}/release", () => ({ token: multiByteToken })],
    ["/v1/rwlocks/{name}/read/acquire", () => ({ ttlMs: 1000, token: multiByteToken })],
    ["/v1/rwlocks/{name}/write/acquire", () => ({ ttlMs: 1000, token: multiByteToken })],
    ["/v1/rwlocks/{name}/heartbeat", () => ({ token: multiByteToken })],
    ["/v1/rwlocks/{name}/read/heartbeat", () => ({ token: multiByteToken })],
    ["/v1/rwlocks/{name}/release", () => ({ token: multiByteToken })],
    ["/v1/rwlocks/{name}/write/release", () => ({ token: multiByteToken })],
    ["/v1/semaphores/{name}/heartbeat", () => ({ token: multiByteToken })],
    ["/v1/semaphores/{name}/release", () => ({ token: multiByteToken })],
    ["/v1/idempotency/{name}/heartbeat", () => ({ token: multiByteToken })],
    ["/v1/idempotency/{name}/complete", () => ({ token: multiByteToken, response: { ok: true } })],
    ["/v1/idempotency/{name}/fail", () => ({ token: multiByteToken })],
  ];
  for (const [route, body] of tokenRoutes) {
    it(`${route} with a token of 200 three-byte characters (600 bytes) is 400 invalid_token`, async () => {
      const name = uniqueName("mb-token");
      const res = await post(route.replace("{name}", name), body(name));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_token");
      expect(typeof res.body.message).toBe("string");
    });
  }

  it("a token of exactly 256 ASCII bytes is valid input: lease_lost, not a 400", async () => {
    const res = await post(`/v1/locks/${uniqueName("long-token")}/release`, { token: "t".repeat(256) });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("lease_lost");
  });

  for (const [label, segment] of [
    ["a space", "a%20b"],
    ["a slash", "a%2Fb"],
    ["201 characters", "n".repeat(201)],
    ["a brace", "a%7Bb%7D"],
  ]) {
    it(`a name with ${label} is 400 invalid_name`, async () => {
      const res = await post(`/v1/locks/${segment}/acquire`, { ttlMs: 1000 });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_name");
      expect((await get(`/v1/locks/${segment}`)).body.error).toBe("invalid_name");
    });
  }

  it("a name over 200 characters is said to be too long, with its length", async () => {
    const res = await post(`/v1/locks/${"n".repeat(250)}/acquire`, { ttlMs: 1000 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "invalid_name", message: "names are at most 200 characters; this one is too long (250)" });
  });

  it("accepts every character the name pattern allows", async () => {
    const name = `A-z_0.9:@+=${Date.now()}`;
    const res = await post(`/v1/locks/${encodeURIComponent(name)}/acquire`, { ttlMs: 1000 });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe(name);
  });

  it("a missing or unknown key is 401 unauthorized", async () => {
    const name = uniqueName("auth");
    for (const key of [null, "not-a-key", ""]) {
      const res = await post(`/v1/locks/${name}/acquire`, { ttlMs: 1000 }, { key });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe("unauthorized");
    }
    expect((await get(`/v1/locks/${name}`)).body.held).toBe(false);
  });

  it("a key that is a configured key's prefix, that key and more, or that key with one character changed is 401", async () => {
    const name = uniqueName("auth");
    for (const key of [KEY_A.slice(0, -1), `${KEY_A}a`, `${KEY_A.slice(0, -1)}b`, `b${KEY_A.slice(1)}`, KEY_A.repeat(2)]) {
      const res = await post(`/v1/locks/${name}/acquire`, { ttlMs: 1000 }, { key });
      expect(res.status, key).toBe(401);
      expect(res.body.error).toBe("unauthorized");
    }
    expect((await get(`/v1/locks/${name}`)).body.held).toBe(false);
    expect((await post(`/v1/locks/${name}/acquire`, { ttlMs: 1000 }, { key: KEY_A })).status).toBe(200);
  });

  it("with no API keys configured every request is refused: 503 not_configured", async () => {
    const unconfigured = api(kind, { API_KEYS: undefined });
    const res = await unconfigured.post(`/v1/locks/${uniqueName("cfg")}/acquire`, { ttlMs: 1000 });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe("not_configured");
  });
}
