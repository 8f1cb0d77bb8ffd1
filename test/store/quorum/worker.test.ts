// The Worker configured with a quorum of three Upstash databases
// (UPSTASH_REDIS_REST_URLS / _TOKENS), served by workerd over real TCP, each
// database a real redis-server behind its own gateway, taken down for real.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HoldfastClient, LockedError, StoreUnavailableError } from "../../../src/client/index";
import { startLocalStack } from "../../../tools/local-stack/stack.mjs";
import type { LocalStack } from "../../../tools/local-stack/stack.mjs";
import { startWorkerServer, type WorkerServer } from "../../../tools/serve-worker/serve.mjs";
import { handshakeAnswer } from "../../support/waitSocket";
import { until } from "../../support/workerServers";

const KEY = "quorum-test-key-123456";
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
let stacks: LocalStack[];
let worker: WorkerServer;
const client = () => new HoldfastClient({ baseUrl: worker.url, apiKey: KEY, timeoutMs: 5000 });
const api = (path: string, init: RequestInit = {}) =>
  fetch(`${worker.url}${path}`, { ...init, headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" } });

beforeAll(async () => {
  stacks = await Promise.all([startLocalStack(), startLocalStack(), startLocalStack()]);
  worker = await startWorkerServer({
    vars: {
      API_KEYS: `q=${KEY}`,
      UPSTASH_REDIS_REST_URLS: stacks.map((s) => s.url).join(","),
      UPSTASH_REDIS_REST_TOKENS: stacks.map((s) => s.token).join(","),
      STORE_TIMEOUT_MS: "800",
    },
  });
}, 120_000);
afterAll(async () => {
  await worker?.stop();
  await Promise.all((stacks ?? []).map((s) => s.stop()));
});
afterEach(async () => {
  for (const s of stacks) {
    s.redis.resume();
    if ((await fetch(`${worker.url}/healthz`)).status !== 200 || !(await pingable(s))) await s.redis.restart();
  }
});

async function pingable(s: LocalStack): Promise<boolean> {
  const res = await fetch(s.url, { method: "POST", headers: { authorization: `Bearer ${s.token}` }, body: JSON.stringify(["PING"]) }).catch(
    () => undefined,
  );
  return res?.status === 200;
}

describe("the Worker on a quorum of three databases", () => {
  it("serves mutexes, with waiters granted in turn on release", async () => {
    const name = unique("w");
    const first = await client().lock(name, { ttlMs: 5000 });
    await expect(client().lock(name, { ttlMs: 5000 })).rejects.toBeInstanceOf(LockedError);
    const waiting = client().lock(name, { ttlMs: 5000, waitMs: 10_000 });
    await until(
      () => client().inspect("mutex", name),
      (s) => (s as { waiters?: number }).waiters === 1,
    );
    await first.release();
    const second = await waiting;
    expect(second.fence).toBeGreaterThan(first.fence);
    await second.release();
  });

  it("keeps serving with one database stopped: no 503", async () => {
    await stacks[0].redis.stop();
    const name = unique("w-one-down");
    let last = 0;
    for (let k = 0; k < 5; k++) {
      const lease = await client().lock(name, { ttlMs: 5000 });
      expect(lease.fence).toBeGreaterThan(last);
      last = lease.fence;
      await lease.heartbeat();
      await lease.release();
    }
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
  });

  it("with two stopped: 503 store_unavailable within the bound, and nothing left held once they are back", async () => {
    await stacks[0].redis.stop();
    await stacks[1].redis.stop();
    const name = unique("w-two-down");
    const started = Date.now();
    const res = await api(`/v1/locks/${name}/acquire`, { method: "POST", body: JSON.stringify({ ttlMs: 5000 }) });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: "store_unavailable" });
    expect(Date.now() - started).toBeLessThan(3 * 800 + 1000);
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(503);
    await stacks[0].redis.restart();
    await stacks[1].redis.restart();
    const lease = await client().lock(name, { ttlMs: 5000 });
    await lease.release();
    await expect(
      client()
        .lock(name, { ttlMs: 1000 })
        .then((l) => l.release()),
    ).resolves.not.toThrow();
  });

  it("answers the other kinds 501 not_supported, naming why", async () => {
    const sem = await api(`/v1/semaphores/${unique("s")}/acquire`, { method: "POST", body: JSON.stringify({ ttlMs: 5000, limit: 2 }) });
    expect(sem.status).toBe(501);
    expect(await sem.json()).toMatchObject({ error: "not_supported", message: expect.stringMatching(/mutex only/) });
    const idem = await api(`/v1/idempotency/${unique("i")}/begin`, { method: "POST", body: JSON.stringify({ ttlMs: 5000 }) });
    expect(idem.status).toBe(501);
  });

  it("refuses another kind's wait socket 501 not_supported at its handshake, before any socket", async () => {
    const answer = await handshakeAnswer(worker.url, `/v1/semaphores/${unique("s")}/wait`, { authorization: `Bearer ${KEY}` });
    expect(answer.status).toBe(501);
    expect(answer.body).toMatchObject({ error: "not_supported", message: expect.stringMatching(/mutex only/) });
  });
});

describe("a quorum configured wrong", () => {
  it("is not_configured at /healthz and on every call, not a 500", async () => {
    const bad = await startWorkerServer({
      vars: { API_KEYS: `q=${KEY}`, UPSTASH_REDIS_REST_URLS: "http://a.example,http://b.example", UPSTASH_REDIS_REST_TOKENS: "t1,t2" },
    });
    try {
      const health = await fetch(`${bad.url}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ status: "not_configured", message: expect.stringMatching(/odd number of at least 3/) });
      const res = await fetch(`${bad.url}/v1/locks/x/acquire`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: "{}" });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: "not_configured" });
    } finally {
      await bad.stop();
    }
  });

  it("is not_configured when one database is listed twice: it would count twice toward a majority", async () => {
    // Databases 0 and 1 are real and up; 0 listed twice would make it a majority of three on its own.
    const [a, b] = stacks;
    const bad = await startWorkerServer({
      vars: {
        API_KEYS: `q=${KEY}`,
        UPSTASH_REDIS_REST_URLS: [a.url, `${a.url}/`, b.url].join(","),
        UPSTASH_REDIS_REST_TOKENS: [a.token, a.token, b.token].join(","),
      },
    });
    try {
      const health = await fetch(`${bad.url}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ status: "not_configured", message: expect.stringMatching(/listed twice/) });
      const res = await fetch(`${bad.url}/v1/locks/${unique("twice")}/acquire`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ ttlMs: 5000 }),
      });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: "not_configured" });
    } finally {
      await bad.stop();
    }
  });
});

// StoreUnavailableError is the client's name for a 503 it gave up on; imported to keep the contract's names in view.
void StoreUnavailableError;
