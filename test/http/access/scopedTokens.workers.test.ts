// Scoped tokens (docs/API.md "Scoped tokens"): minted by a namespace key (POST /v1/tokens) or signed offline
// by the library's helper, accepted wherever a key is, and refused outside their prefix or operations (403
// forbidden, naming why), once expired (401) or when no secret of their namespace signed them (401).
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../src/worker";
import { signScopedToken } from "../../../src/index";
import { signClaims } from "../../../src/wire/scopedToken";
import { keyAsProtocol, SOCKET_PROTOCOL } from "../../../src/wire/socketProtocol";
import { pollUntil } from "../../support/pollUntil";
import { api, KEY_ADMIN, KEY_B, uniqueName } from "../../support/workers/api";

const SECRET_A = "tenant-a-token-secret-0123456789abcdef";
const OLD_SECRET_A = "tenant-a-older-secret-0123456789abcdef";
const SECRET_B = "tenant-b-token-secret-0123456789abcdef";
const TOKEN_SECRETS = `tenant-a=${SECRET_A},tenant-b=${SECRET_B},tenant-a=${OLD_SECRET_A}`;
const ALL = ["acquire", "release", "heartbeat", "wait", "inspect"] as const;

const server = api("durable", { TOKEN_SECRETS });

async function mint(prefix: string, operations: readonly string[] = ALL, ttlMs = 60_000, key?: string) {
  const res = await server.post("/v1/tokens", { prefix, operations, ttlMs }, { key });
  expect(res.status).toBe(200);
  return res.body.token as string;
}

/** A wait socket's handshake as a browser sends it: the key (here a token) as a subprotocol. */
async function openSocket(path: string, token: string, origin?: string): Promise<Response> {
  const headers: Record<string, string> = { upgrade: "websocket", "sec-websocket-protocol": `${SOCKET_PROTOCOL}, ${keyAsProtocol(token)}` };
  if (origin) headers.origin = origin;
  const res = await worker.fetch(new Request(`http://holdfast.test${path}`, { headers }), server.env, createExecutionContext());
  if (res.webSocket) {
    res.webSocket.accept();
    res.webSocket.close(1000, "done");
  }
  return res;
}

/** A socket opened with `token` and kept open: send, and wait for the next message of a type. */
async function liveSocket(path: string, token: string) {
  const headers = { upgrade: "websocket", "sec-websocket-protocol": `${SOCKET_PROTOCOL}, ${keyAsProtocol(token)}` };
  const res = await worker.fetch(new Request(`http://holdfast.test${path}`, { headers }), server.env, createExecutionContext());
  expect(res.status).toBe(101);
  const ws = res.webSocket as WebSocket;
  ws.accept();
  const seen: any[] = [];
  ws.addEventListener("message", (e) => void seen.push(JSON.parse(String(e.data))));
  let read = 0;
  return {
    send: (message: Record<string, unknown>) => ws.send(JSON.stringify(message)),
    /** The next message not yet read, which must be of `type`. */
    next: async (type: string) => {
      await pollUntil(
        () => seen.length,
        (n) => n > read,
        5000,
      );
      const message = seen[read++];
      expect(message.type, JSON.stringify(message)).toBe(type);
      return message;
    },
  };
}

describe("minting", () => {
  it("answers a token with its scope and expiry, for the caller's namespace", async () => {
    const before = Date.now();
    const res = await server.post("/v1/tokens", { prefix: "cart-", operations: ["acquire", "release"], ttlMs: 600_000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ namespace: "tenant-a", prefix: "cart-", operations: ["acquire", "release"] });
    expect(res.body.token).toMatch(/^hfs1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(res.body.expiresAt).toBeGreaterThanOrEqual(before + 600_000);
    expect(res.body.expiresAt).toBeLessThanOrEqual(Date.now() + 600_000);
  });

  it("refuses listing, audit or force release among the operations, a lifetime over 24 h, and no prefix", async () => {
    for (const operations of [["list"], ["acquire", "audit"], ["force-release"], []]) {
      const res = await server.post("/v1/tokens", { prefix: "p-", operations, ttlMs: 60_000 });
      expect([res.status, res.body.error]).toEqual([400, "invalid_operations"]);
    }
    const long = await server.post("/v1/tokens", { prefix: "p-", operations: ["acquire"], ttlMs: 86_400_001 });
    expect([long.status, long.body.error]).toEqual([400, "invalid_ttl"]);
    const day = await server.post("/v1/tokens", { prefix: "p-", operations: ["acquire"], ttlMs: 86_400_000 });
    expect(day.status).toBe(200);
    const noPrefix = await server.post("/v1/tokens", { prefix: "", operations: ["acquire"], ttlMs: 60_000 });
    expect([noPrefix.status, noPrefix.body.error]).toEqual([400, "invalid_prefix"]);
  });

  it("is for namespace keys: a token cannot mint another", async () => {
    const token = await mint("p-");
    const res = await server.post("/v1/tokens", { prefix: "p-", operations: ["acquire"], ttlMs: 60_000 }, { key: token });
    expect([res.status, res.body.error, res.body.reason]).toEqual([403, "forbidden", "operation"]);
  });

  it("answers 503 not_configured for a namespace without a secret", async () => {
    const res = await api("durable", { TOKEN_SECRETS: `tenant-b=${SECRET_B}` }).post("/v1/tokens", {
      prefix: "p-",
      operations: ["acquire"],
      ttlMs: 60_000,
    });
    expect([res.status, res.body.error]).toEqual([503, "not_configured"]);
  });
});

describe("the offline helper", () => {
  it("refuses what POST /v1/tokens refuses, and a short secret", async () => {
    const ok = { secret: SECRET_A, namespace: "tenant-a", prefix: "p-", operations: ["acquire" as const], ttlMs: 60_000 };
    await expect(signScopedToken({ ...ok, ttlMs: 86_400_001 })).rejects.toThrow(/ttlMs/);
    await expect(signScopedToken({ ...ok, ttlMs: 999 })).rejects.toThrow(/ttlMs/);
    await expect(signScopedToken({ ...ok, operations: ["list" as "acquire"] })).rejects.toThrow(/operations/);
    await expect(signScopedToken({ ...ok, operations: [] })).rejects.toThrow(/operations/);
    await expect(signScopedToken({ ...ok, prefix: "" })).rejects.toThrow(/prefix/);
    await expect(signScopedToken({ ...ok, namespace: "a b" })).rejects.toThrow(/namespace/);
    await expect(signScopedToken({ ...ok, secret: "short" })).rejects.toThrow(/32 characters/);
    await expect(signScopedToken(ok)).resolves.toMatchObject({ token: expect.stringMatching(/^hfs1\./) });
  });
});

describe("a token in its scope", () => {
  it("acquires, heartbeats, inspects and releases names under its prefix", async () => {
    const name = uniqueName("cart-");
    const token = await mint("cart-");
    const held = await server.post(`/v1/locks/${name}/acquire`, { ttlMs: 10_000 }, { key: token });
    expect(held.status).toBe(200);
    expect((await server.post(`/v1/locks/${name}/heartbeat`, { token: held.body.token }, { key: token })).status).toBe(200);
    const seen = await server.get(`/v1/locks/${name}`, { key: token });
    expect([seen.status, seen.body.held]).toEqual([200, true]);
    // The namespace key sees the token's lock: the token acts in its namespace.
    expect((await server.get(`/v1/locks/${name}`)).body.fence).toBe(held.body.fence);
    expect((await server.post(`/v1/locks/${name}/release`, { token: held.body.token }, { key: token })).status).toBe(200);
  });

  it("covers every kind: a semaphore, a read lock and an idempotency key (begin is its acquire, complete its release)", async () => {
    const token = await mint("job-", ["acquire", "release"]);
    const sem = await server.post(`/v1/semaphores/${uniqueName("job-")}/acquire`, { limit: 2, ttlMs: 5000 }, { key: token });
    const rw = await server.post(`/v1/rwlocks/${uniqueName("job-")}/read/acquire`, { ttlMs: 5000 }, { key: token });
    const key = uniqueName("job-");
    const begun = await server.post(`/v1/idempotency/${key}/begin`, { ttlMs: 5000 }, { key: token });
    expect([sem.status, rw.status, begun.status]).toEqual([200, 200, 201]);
    const done = await server.post(`/v1/idempotency/${key}/complete`, { token: begun.body.token, response: { ok: 1 } }, { key: token });
    expect(done.status).toBe(200);
  });

  it("is accepted signed offline by the library's helper, with either of its namespace's secrets", async () => {
    for (const secret of [SECRET_A, OLD_SECRET_A]) {
      const { token, expiresAt } = await signScopedToken({ secret, namespace: "tenant-a", prefix: "off-", operations: ["inspect"], ttlMs: 60_000 });
      expect(expiresAt).toBeGreaterThan(Date.now());
      expect((await server.get(`/v1/locks/${uniqueName("off-")}`, { key: token })).status).toBe(200);
    }
  });

  it("watches a lock (inspect) over a watch socket, and may not without inspect", async () => {
    const name = uniqueName("cart-");
    expect((await openSocket(`/v1/locks/${name}/watch`, await mint("cart-", ["inspect"]))).status).toBe(101);
    expect((await openSocket(`/v1/locks/${name}/watch`, await mint("cart-", ["acquire", "wait"]))).status).toBe(403);
  });

  it("opens a lock's wait socket (wait and acquire) with the token as its key subprotocol", async () => {
    const res = await openSocket(`/v1/locks/${uniqueName("cart-")}/wait`, await mint("cart-", ["wait", "acquire"]));
    expect(res.status).toBe(101);
  });
});

describe("a token out of its scope", () => {
  it("is 403 forbidden (reason name) for a name outside its prefix, over HTTP and a wait socket", async () => {
    const token = await mint("cart-");
    const res = await server.post(`/v1/locks/${uniqueName("order-")}/acquire`, { ttlMs: 5000 }, { key: token });
    expect([res.status, res.body.error, res.body.reason]).toEqual([403, "forbidden", "name"]);
    expect(res.body.message).toMatch(/names starting with "cart-"/);
    // Percent-encoding does not move a name into the prefix, nor out of it.
    expect((await server.get("/v1/locks/x%2Dcart-1", { key: token })).status).toBe(403);
    expect((await server.get("/v1/locks/cart%2D1", { key: token })).status).toBe(200);
    const socket = await openSocket(`/v1/locks/${uniqueName("order-")}/wait`, token);
    expect(socket.status).toBe(403);
  });

  it("is 403 forbidden (reason operation) for an operation it was not given", async () => {
    const token = await mint("cart-", ["inspect"]);
    const name = uniqueName("cart-");
    const res = await server.post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 }, { key: token });
    expect([res.status, res.body.error, res.body.reason]).toEqual([403, "forbidden", "operation"]);
    expect(res.body.message).toMatch(/needs acquire/);
    // A wait socket acquires: wait alone does not open one.
    expect((await openSocket(`/v1/locks/${name}/wait`, await mint("cart-", ["wait"]))).status).toBe(403);
  });

  it("is 403 forbidden for listing, the audit log, force release, whoami and the notification key, whatever its operations", async () => {
    const token = await mint("a", ALL);
    const name = uniqueName("a");
    for (const [method, path] of [
      ["GET", "/v1/locks"],
      ["GET", "/v1/locks?prefix=a"],
      ["GET", "/v1/semaphores"],
      ["GET", "/v1/audit"],
      ["POST", `/v1/locks/${name}/force-release`],
      ["GET", "/v1/whoami"],
      ["GET", "/v1/notifications/key"],
    ]) {
      const res = await server.call(method, path, method === "POST" ? { reason: "try" } : undefined, { key: token });
      expect([path, res.status, res.body.error, res.body.reason]).toEqual([path, 403, "forbidden", "operation"]);
    }
  });

  it("does not reach another namespace: a token names its own, signed with that namespace's secret only", async () => {
    const claims = { namespace: "tenant-b", prefix: "cart-", operations: [...ALL], expiresAt: Date.now() + 60_000 };
    const forged = await signClaims(SECRET_A, claims);
    const res = await server.get(`/v1/locks/${uniqueName("cart-")}`, { key: forged });
    expect([res.status, res.body.error, res.body.reason]).toEqual([401, "unauthorized", "bad_token"]);
    // tenant-b's own token works in tenant-b, not on tenant-a's locks.
    const own = await mint("cart-", ["inspect"], 60_000, KEY_B);
    const name = uniqueName("cart-");
    const heldByA = await server.post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 });
    expect((await server.get(`/v1/locks/${name}`, { key: own })).body.held).toBe(false);
    await server.post(`/v1/locks/${name}/release`, { token: heldByA.body.token });
  });
});

describe("a token that is not good", () => {
  const claims = () => ({ namespace: "tenant-a", prefix: "cart-", operations: [...ALL], expiresAt: Date.now() + 60_000 });

  it("is 401 once expired, saying so", async () => {
    const expired = await signClaims(SECRET_A, { ...claims(), expiresAt: Date.now() - 1 });
    const res = await server.get(`/v1/locks/${uniqueName("cart-")}`, { key: expired });
    expect([res.status, res.body.error, res.body.reason]).toEqual([401, "unauthorized", "token_expired"]);
    expect(res.body.message).toMatch(/expired at \d{4}-/);
    expect((await openSocket(`/v1/locks/${uniqueName("cart-")}/wait`, expired)).status).toBe(401);
  });

  it("ends the sockets it opened when it expires: a kept socket's heartbeat and a watch are refused 401 token_expired", async () => {
    const expiresAt = Date.now() + 1500;
    const token = await signClaims(SECRET_A, { ...claims(), expiresAt });
    const kept = await liveSocket(`/v1/locks/${uniqueName("cart-")}/wait`, token);
    kept.send({ type: "acquire", ttlMs: 30_000, waitMs: 1000, keep: true });
    const granted = await kept.next("granted");
    kept.send({ type: "ack", token: granted.grant.token });
    await kept.next("held");
    kept.send({ type: "heartbeat" });
    expect((await kept.next("heartbeat")).ttlMs).toBe(30_000); // alive while the token is
    const watch = await liveSocket(`/v1/locks/${uniqueName("cart-")}/watch`, token);
    watch.send({ type: "watch" });
    await watch.next("state");
    // Nothing changes on the watched lock: its socket is ended by the token's expiry alone.
    const watchEnd = await watch.next("error");
    expect([watchEnd.status, watchEnd.reason]).toEqual([401, "token_expired"]);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    kept.send({ type: "heartbeat" });
    const keptEnd = await kept.next("error");
    expect([keptEnd.status, keptEnd.reason]).toEqual([401, "token_expired"]);
  });

  it("is 401 with a bad signature, an altered scope, an unknown secret, or a lifetime over a day", async () => {
    const good = await signClaims(SECRET_A, claims());
    const [head, payload, mac] = good.split(".");
    const flipped = `${head}.${payload}.${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`;
    const widened = `${head}.${btoa(JSON.stringify({ ns: "tenant-a", prefix: "", ops: [...ALL], exp: claims().expiresAt })).replace(/=+$/, "")}.${mac}`;
    const unknown = await signClaims("some-other-secret-0123456789abcdefgh", claims());
    const tooLong = await signClaims(SECRET_A, { ...claims(), expiresAt: Date.now() + 2 * 86_400_000 });
    for (const token of [flipped, widened, unknown, tooLong, `${good}.x`, "hfs1.garbage"]) {
      const res = await server.get(`/v1/locks/${uniqueName("cart-")}`, { key: token });
      expect([res.status, res.body.reason]).toEqual([401, "bad_token"]);
    }
    expect((await server.get(`/v1/locks/${uniqueName("cart-")}`, { key: good })).status).toBe(200);
  });

  it("is revoked by taking its secret out of TOKEN_SECRETS", async () => {
    const token = await mint("cart-");
    const rotated = api("durable", { TOKEN_SECRETS: `tenant-a=${OLD_SECRET_A}` });
    expect((await rotated.get(`/v1/locks/${uniqueName("cart-")}`, { key: token })).status).toBe(401);
  });

  it("leaves the keys alone: an admin key still force-releases, and no API key may look like a token", async () => {
    const name = uniqueName("cart-");
    await server.post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 });
    const freed = await server.post(`/v1/locks/${name}/force-release`, { reason: "test" }, { key: KEY_ADMIN });
    expect(freed.status).toBe(200);
    const odd = api("durable", { API_KEYS: "tenant-a=hfs1.looks-like-a-token" });
    const refused = await odd.get("/v1/whoami", { key: "key-aaaaaaaa" });
    expect([refused.status, refused.body.message]).toEqual([503, expect.stringMatching(/not starting hfs1\./)]);
  });
});
