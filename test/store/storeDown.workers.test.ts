import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, uniqueName } from "../support/workers/api";

/**
 * A store that does not answer gets a 503 store_unavailable within a bounded
 * time. Each case stops or pauses a real redis-server (or its gateway) of a
 * disposable stack made by the test control server.
 */
const control = env.TEST_STACK_CONTROL_URL;
const STORE_DEADLINE_MS = 2000; // the store's deadline (src/deadline.ts): a store that does not answer takes this long
const BOUND_MS = 3000; // the 2 s store deadline plus slack for a busy machine

/** A 503's body says what the caller can act on and quotes an error id; nothing of the store's insides. */
function expectPlainUnavailable(body: Record<string, unknown>) {
  expect(body).toMatchObject({ error: "store_unavailable", errorId: expect.stringMatching(/^err_/) });
  expect(["unknown", "not_applied"]).toContain(body.outcome);
  expect(String(body.message)).not.toMatch(
    /mutex_|idempotency_|rwlock_|semaphore_|holders_|[0-9a-f]{40}|Command failed|ERR |NOSCRIPT|ECONNREFUSED|fetch failed|script/i,
  );
}

async function stackAction(id: string, action: string) {
  const res = await fetch(`${control}/stacks/${id}/${action}`, { method: "POST" });
  expect(res.status).toBe(200);
}

describe("store unavailable", () => {
  let stack: { id: string; url: string; token: string };
  let worker: ReturnType<typeof api>;

  beforeAll(async () => {
    stack = await (await fetch(`${control}/stacks`, { method: "POST" })).json();
    worker = api("redis", { UPSTASH_REDIS_REST_URL: stack.url, UPSTASH_REDIS_REST_TOKEN: stack.token });
  });
  afterAll(async () => {
    await fetch(`${control}/stacks/${stack.id}`, { method: "DELETE" });
  });

  async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
    const started = Date.now();
    const result = await fn();
    return [result, Date.now() - started];
  }

  it("redis-server stopped mid-run: 503 store_unavailable quickly, and service resumes after restart", async () => {
    const name = uniqueName("down");
    expect((await worker.post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 })).status).toBe(200);
    await stackAction(stack.id, "redis/stop");
    const [res, ms] = await timed(() => worker.post(`/v1/locks/${uniqueName("down")}/acquire`, { ttlMs: 5000 }));
    expect(res.status).toBe(503);
    expectPlainUnavailable(res.body);
    expect(ms).toBeLessThan(BOUND_MS);
    const health = await worker.get("/healthz", { key: null });
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ store: "redis", answers: false, message: "the store does not answer" });
    await stackAction(stack.id, "redis/start");
    expect((await worker.post(`/v1/locks/${uniqueName("back")}/acquire`, { ttlMs: 5000 })).status).toBe(200);
  });

  it("redis-server hung (paused): 503 within the deadline, saying the outcome is unknown", async () => {
    await stackAction(stack.id, "redis/pause");
    try {
      const [res, ms] = await timed(() => worker.post(`/v1/locks/${uniqueName("hung")}/acquire`, { ttlMs: 5000 }));
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ error: "store_unavailable", outcome: "unknown" });
      expectPlainUnavailable(res.body);
      // What to do, for a caller that sent no request id too (this one did not): a bare retry is a new request.
      expect(res.body.message).toMatch(/same Holdfast-Request-Id applies it once \(a request sent without one is a new request when retried\)/);
      expect(ms).toBeLessThan(BOUND_MS);
      const [inspect, inspectMs] = await timed(() => worker.get(`/v1/locks/${uniqueName("hung")}`));
      expect(inspect.status).toBe(503);
      expectPlainUnavailable(inspect.body);
      expect(inspectMs).toBeLessThan(BOUND_MS);
    } finally {
      await stackAction(stack.id, "redis/resume");
    }
  });

  it("bad input is still a 400 while the store is down: validation comes first", async () => {
    await stackAction(stack.id, "redis/stop");
    try {
      const res = await worker.post(`/v1/locks/${uniqueName("bad")}/acquire`, { ttlMs: 5 });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_ttl");
    } finally {
      await stackAction(stack.id, "redis/start");
    }
  });

  it("Redis at its memory limit: 503 at once saying the store refused the write and nothing changed; reads still answer", async () => {
    const name = uniqueName("full");
    const held = await worker.post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 });
    expect(held.status).toBe(200);
    await stackAction(stack.id, "redis/full");
    try {
      const [res, ms] = await timed(() => worker.post(`/v1/locks/${uniqueName("full")}/acquire`, { ttlMs: 5000 }));
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ error: "store_unavailable", outcome: "not_applied" });
      expect(String(res.body.message)).toMatch(/refused the write.*out of memory/);
      expectPlainUnavailable(res.body);
      // At once: not after the store's deadline, as a store that does not answer would be.
      expect(ms).toBeLessThan(STORE_DEADLINE_MS);
      const release = await worker.post(`/v1/locks/${name}/release`, { token: held.body.token });
      expect(release.status).toBe(503);
      expect(release.body.outcome).toBe("not_applied");
      const inspect = await worker.get(`/v1/locks/${name}`);
      expect(inspect.status).toBe(200);
      expect(inspect.body).toMatchObject({ held: true, fence: held.body.fence });
    } finally {
      await stackAction(stack.id, "redis/roomy");
    }
    expect((await worker.post(`/v1/locks/${name}/release`, { token: held.body.token })).status).toBe(200);
  });

  it("the Upstash endpoint unreachable (gateway stopped): 503 quickly", async () => {
    await stackAction(stack.id, "gateway/stop");
    const [res, ms] = await timed(() => worker.post(`/v1/locks/${uniqueName("nogw")}/release`, { token: "hf_x" }));
    expect(res.status).toBe(503);
    expectPlainUnavailable(res.body);
    expect(ms).toBeLessThan(BOUND_MS);
  });
});
