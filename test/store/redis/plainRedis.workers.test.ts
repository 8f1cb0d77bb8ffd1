import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, uniqueName } from "../../support/workers/api";

/**
 * The Worker on stock Redis behind a plain REST proxy (the gateway in
 * verbatim mode), which refuses Upstash's allow-key-locking flag: the
 * Worker's Upstash client (the Workers build of @upstash/redis) notices on
 * its first call and every kind works with the scripts sent without it.
 */
const control = env.TEST_STACK_CONTROL_URL;

describe("stock Redis behind a REST proxy", () => {
  let stack: { id: string; url: string; token: string };
  let worker: ReturnType<typeof api>;

  beforeAll(async () => {
    stack = await (await fetch(`${control}/stacks?scripts=verbatim`, { method: "POST" })).json();
    // The case is the flag's fallback, not a deadline: the first call's refusal and resend passed the 2 s default on a busy runner.
    worker = api("redis", { UPSTASH_REDIS_REST_URL: stack.url, UPSTASH_REDIS_REST_TOKEN: stack.token, STORE_TIMEOUT_MS: "10000" });
  });
  afterAll(async () => {
    await fetch(`${control}/stacks/${stack.id}`, { method: "DELETE" });
  });

  it("refuses the flag itself", async () => {
    const res = await fetch(stack.url, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.token}` },
      body: JSON.stringify(["EVAL", "#!lua flags=allow-key-locking\nreturn 1", "0"]),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain("Unexpected flag in script shebang: allow-key-locking");
  });

  it("serves every kind with the scripts sent without the flag", async () => {
    const name = uniqueName("plain");
    const grant = await worker.post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 });
    expect(grant.status).toBe(200);
    expect((await worker.post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 })).status).toBe(409);
    expect((await worker.get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, fence: grant.body.fence });
    expect((await worker.post(`/v1/locks/${name}/release`, { token: grant.body.token })).status).toBe(200);
    expect((await worker.get(`/v1/locks/${name}`)).body).toMatchObject({ held: false });

    const reader = await worker.post(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 5000 });
    expect(reader.status).toBe(200);
    expect((await worker.post(`/v1/rwlocks/${name}/write/acquire`, { ttlMs: 5000 })).status).toBe(409);
    expect((await worker.post(`/v1/rwlocks/${name}/read/release`, { token: reader.body.token })).status).toBe(200);

    const permit = await worker.post(`/v1/semaphores/${name}/acquire`, { limit: 1, ttlMs: 5000 });
    expect(permit.status).toBe(200);
    expect((await worker.post(`/v1/semaphores/${name}/acquire`, { limit: 1, ttlMs: 5000 })).status).toBe(409);
    expect((await worker.get(`/v1/semaphores/${name}`)).body).toMatchObject({ limit: 1, used: 1 });

    const begun = await worker.post(`/v1/idempotency/${name}/begin`, { ttlMs: 5000 });
    expect(begun.status).toBe(201);
    expect((await worker.post(`/v1/idempotency/${name}/complete`, { token: begun.body.token, response: { ok: 1 } })).status).toBe(200);
    const again = await worker.post(`/v1/idempotency/${name}/begin`, { ttlMs: 5000 });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ state: "completed", response: { ok: 1 } });
  });
});
