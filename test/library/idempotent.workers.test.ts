import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { Redis } from "@upstash/redis/cloudflare";
import { describe, expect, it } from "vitest";
import { idempotent, senders } from "../../src/index";
import { HoldfastClient } from "../../src/client/index";
import { EXPECTED, runCases } from "../support/idempotentCases.mjs";
import { KEY_A } from "../support/workers/api";

/**
 * `idempotent(handler)` inside workerd, as a Worker's `fetch` uses it: the shared cases every runtime
 * runs (test/support/idempotentCases.mjs), on both backends. Redis: @upstash/redis's Workers build
 * against the test stack's gateway. A holdfast service: the real Worker (src/worker.ts, this pool's
 * main Worker, on the Redis store with the pool's API keys), reached as an app Worker reaches a
 * holdfast Worker bound to it, through a service binding: the HoldfastClient's `fetch` is the
 * binding's (`exports.default` of cloudflare:workers, the pool's binding to its main Worker).
 */
const holdfast = (exports as unknown as { default: Fetcher }).default;
const BACKENDS = [
  { name: "redis", keys: () => ({ redis: new Redis({ url: env.TEST_UPSTASH_URL, token: env.TEST_UPSTASH_TOKEN }) }) },
  {
    name: "a holdfast service (service binding)",
    keys: () => ({
      client: new HoldfastClient({
        baseUrl: "https://holdfast.internal",
        apiKey: KEY_A,
        fetch: (input, init) => holdfast.fetch(input as RequestInfo, init),
      }),
    }),
  },
];
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

describe.each(BACKENDS)("idempotent(handler) in workerd over $name", ({ keys }) => {
  it("the shared cases: a replay, 409 and 422, a required key, a GitHub redelivery, a failed run retried, a deadline's ttl", async () => {
    expect(await runCases({ idempotent, senders, keys: keys() })).toEqual(EXPECTED);
  });

  it("a Worker's fetch runs once per GitHub delivery: the redelivery is replayed; a request without one is 400", async () => {
    let runs = 0;
    const worker = {
      fetch: idempotent(
        async (request: Request, _env: unknown, _ctx: unknown) => {
          runs++;
          return Response.json({ event: request.headers.get("x-github-event"), runs });
        },
        { ...keys(), ttlMs: 5000, key: senders.github, required: true },
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
