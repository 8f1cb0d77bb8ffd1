import { env } from "cloudflare:test";
import { Redis } from "@upstash/redis/cloudflare";
import { describe, expect, it } from "vitest";
import { idempotent, senders } from "../../src/index";

/**
 * `idempotent(handler)` inside workerd, as a Worker's `fetch` uses it: the
 * same rules as under Node (test/library/idempotent.test.ts), over
 * @upstash/redis's Workers build against the test stack's gateway.
 */
const redis = () => new Redis({ url: env.TEST_UPSTASH_URL, token: env.TEST_UPSTASH_TOKEN });
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

describe("idempotent(handler) in workerd", () => {
  it("a Worker's fetch runs once per GitHub delivery: the redelivery is replayed; a request without one is 400", async () => {
    let runs = 0;
    const worker = {
      fetch: idempotent(
        async (request: Request, _env: unknown, _ctx: unknown) => {
          runs++;
          return Response.json({ event: request.headers.get("x-github-event"), runs });
        },
        { redis: redis(), ttlMs: 5000, key: senders.github, required: true },
      ),
    };
    const delivery = unique("gh");
    const request = () =>
      new Request("https://hooks.example/github", {
        method: "POST",
        headers: { "x-github-delivery": delivery, "x-github-event": "push", "content-type": "application/json" },
        body: JSON.stringify({ ref: "refs/heads/main" }),
      });
    const first = await worker.fetch(request(), env, {});
    expect(await first.json()).toEqual({ event: "push", runs: 1 });
    const again = await worker.fetch(request(), env, {});
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual({ event: "push", runs: 1 });
    const missing = await worker.fetch(new Request("https://hooks.example/github", { method: "POST", body: "{}" }), env, {});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: "missing_idempotency_key", message: expect.stringContaining("X-GitHub-Delivery") });
    expect(runs).toBe(1);
  });
});
