import { describe, expect, it } from "vitest";
import { idempotent, senders } from "holdfast";
import { HoldfastClient } from "../../src/client/index";
import { LOCAL_API_KEY } from "../../tools/dev/local.mjs";
import { idempotentBackends } from "../support/idempotentBackends";

/**
 * `idempotent(handler)`, the fetch-handler wrapper, as an app uses it: a
 * plain `(request, ...rest) => Response` handler, its keys kept by either
 * backend, with the same cases: a real @upstash/redis client against
 * redis-server behind the project's Upstash gateway, or a HoldfastClient of
 * the Worker served as `npm start` serves it (over the same Redis). The
 * rules are the Hono middleware's (test/library/idempotency.test.ts holds
 * the middleware to them).
 */
const { backends: BACKENDS, service } = idempotentBackends();
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** A handler that counts its runs and answers 201 with what it was sent (and the extra argument it was given). */
function counting() {
  const runs: string[] = [];
  const handler = async (request: Request, env?: { region: string }) => {
    const body = await request.text();
    runs.push(body);
    return Response.json({ run: runs.length, body, region: env?.region ?? null }, { status: 201, headers: { "x-order": "o-1", "x-trace": "t" } });
  };
  return { runs, handler };
}

const post = (headers: Record<string, string>, body: unknown) =>
  new Request("https://shop.example/webhooks?x=1", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

describe.each(BACKENDS)("over $name", ({ keys }) => {
  describe("idempotent(handler): a fetch handler run once per key", () => {
    it("runs the handler once; a retry gets the first response, marked replayed, with the kept headers", async () => {
      const { runs, handler } = counting();
      const wrapped = idempotent(handler, { ...keys(), ttlMs: 5000, keepHeaders: ["x-order"] });
      const key = unique("order");
      const first = await wrapped(post({ "idempotency-key": key }, { amount: 10 }), { region: "eu" });
      expect(first.status).toBe(201);
      expect(await first.json()).toEqual({ run: 1, body: '{"amount":10}', region: "eu" });
      const again = await wrapped(post({ "idempotency-key": key }, { amount: 10 }), { region: "eu" });
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("x-order")).toBe("o-1");
      expect(again.headers.get("x-trace")).toBeNull();
      expect(await again.json()).toEqual({ run: 1, body: '{"amount":10}', region: "eu" });
      expect(runs).toHaveLength(1);
    });

    it("a response body that fits the size limit only before it is escaped as JSON is still done once: the retry is a replay", async () => {
      let runs = 0;
      // 59 KB of pretty-printed JSON: its quotes and newlines take about 72 KB once stored as JSON text.
      const body = JSON.stringify(
        Array.from({ length: 1250 }, (_, i) => ({ id: i, name: `item ${i}` })),
        null,
        2,
      );
      const wrapped = idempotent(
        async () => {
          runs++;
          return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
        },
        { ...keys(), ttlMs: 5000 },
      );
      const key = unique("escaped");
      expect(await (await wrapped(post({ "idempotency-key": key }, { a: 1 }))).text()).toBe(body);
      const again = await wrapped(post({ "idempotency-key": key }, { a: 1 }));
      expect(again.status).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      // Too large to keep, as docs/idempotency.md says: replayed with its status and headers, and no body.
      expect(again.headers.get("content-type")).toBe("application/json");
      expect(await again.text()).toBe("");
      expect(runs).toBe(1);
    });

    it("answers 409 in_progress with Retry-After while the first runs, and 422 for the same key with another request", async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let runs = 0;
      const wrapped = idempotent(
        async () => {
          runs++;
          await gate;
          return new Response("done", { status: 200 });
        },
        { ...keys(), ttlMs: 5000 },
      );
      const key = unique("overlap");
      const first = wrapped(post({ "idempotency-key": key }, { a: 1 }));
      // The first has begun the key once its handler runs.
      await expect.poll(() => runs, { timeout: 10_000 }).toBe(1);
      const overlap = await wrapped(post({ "idempotency-key": key }, { a: 1 }));
      expect(overlap.status).toBe(409);
      expect((await overlap.json()) as { error: string }).toMatchObject({ error: "in_progress" });
      expect(Number(overlap.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      const other = await wrapped(post({ "idempotency-key": key }, { a: 2 }));
      expect(other.status).toBe(422);
      expect((await other.json()) as { error: string }).toMatchObject({ error: "fingerprint_mismatch" });
      release();
      expect((await first).status).toBe(200);
      expect(runs).toBe(1);
    });

    it("with fingerprint fields, only those must match: other fields may differ on a replay", async () => {
      const { runs, handler } = counting();
      const wrapped = idempotent(handler, { ...keys(), ttlMs: 5000, fingerprint: ["amount", "currency"] });
      const key = unique("fields");
      await wrapped(post({ "idempotency-key": key }, { amount: 10, currency: "eur", note: "first" }));
      const sameFields = await wrapped(post({ "idempotency-key": key }, { amount: 10, currency: "eur", note: "retry" }));
      expect(sameFields.headers.get("idempotent-replayed")).toBe("true");
      const otherAmount = await wrapped(post({ "idempotency-key": key }, { amount: 11, currency: "eur", note: "first" }));
      expect(otherAmount.status).toBe(422);
      expect(runs).toHaveLength(1);
    });

    it("required: no key is 400 naming the header, and the handler does not run; not required, it runs unprotected", async () => {
      const { runs, handler } = counting();
      const required = await idempotent(handler, { ...keys(), ttlMs: 5000, required: true })(post({}, { a: 1 }));
      expect(required.status).toBe(400);
      expect(await required.json()).toMatchObject({ error: "missing_idempotency_key", message: expect.stringContaining("Idempotency-Key header") });
      expect(runs).toHaveLength(0);
      const optional = await idempotent(handler, { ...keys(), ttlMs: 5000 })(post({}, { a: 1 }));
      expect(optional.status).toBe(201);
      expect(runs).toHaveLength(1);
    });

    it("a handler that throws or answers 5xx fails the key: the retry runs it again", async () => {
      let runs = 0;
      const wrapped = idempotent(
        async () => {
          runs++;
          if (runs === 1) throw new Error("the payment provider timed out");
          if (runs === 2) return new Response("upstream down", { status: 502 });
          return new Response("charged", { status: 200 });
        },
        { ...keys(), ttlMs: 5000 },
      );
      const key = unique("fails");
      await expect(wrapped(post({ "idempotency-key": key }, { a: 1 }))).rejects.toThrow("timed out");
      expect((await wrapped(post({ "idempotency-key": key }, { a: 1 }))).status).toBe(502);
      const third = await wrapped(post({ "idempotency-key": key }, { a: 1 }));
      expect(third.status).toBe(200);
      const replayed = await wrapped(post({ "idempotency-key": key }, { a: 1 }));
      expect(replayed.headers.get("idempotent-replayed")).toBe("true");
      expect(await replayed.text()).toBe("charged");
      expect(runs).toBe(3);
    });
  });

  describe("idempotent(handler) with a cache of completed responses", () => {
    /** Counts the round trips: @upstash/redis and the HoldfastClient both talk by fetch alone. */
    function countFetches() {
      const original = globalThis.fetch;
      const counter = { calls: 0 };
      globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
        counter.calls++;
        return original(input, init);
      }) as typeof fetch;
      return { counter, restore: () => (globalThis.fetch = original) };
    }

    it("answers a replay this process saw complete without a round trip; one past the bound goes to the store again", async () => {
      const { runs, handler } = counting();
      const wrapped = idempotent(handler, { ...keys(), ttlMs: 5000, cache: { entries: 1 } });
      const [a, b] = [unique("cache-a"), unique("cache-b")];
      await wrapped(post({ "idempotency-key": a }, { n: 1 }));
      const fetches = countFetches();
      try {
        const replayed = await wrapped(post({ "idempotency-key": a }, { n: 1 }));
        expect(replayed.headers.get("idempotent-replayed")).toBe("true");
        expect(await replayed.json()).toMatchObject({ run: 1 });
        expect(fetches.counter.calls).toBe(0);
        // Another key completes: with room for one, a's entry goes, and its next replay asks the store.
        await wrapped(post({ "idempotency-key": b }, { n: 2 }));
        const before = fetches.counter.calls;
        const fromStore = await wrapped(post({ "idempotency-key": a }, { n: 1 }));
        expect(fromStore.headers.get("idempotent-replayed")).toBe("true");
        expect(fetches.counter.calls).toBeGreaterThan(before);
        // The same key with another request is the store's to answer (422), not the cache's.
        expect((await wrapped(post({ "idempotency-key": a }, { n: 9 }))).status).toBe(422);
      } finally {
        fetches.restore();
      }
      expect(runs).toHaveLength(2);
    });
  });

  /** Each sender's delivery, shaped as its docs show it, and its redelivery: the handler runs once. */
  describe("senders' keys", () => {
    const id = unique("delivery");
    const deliveries: Array<{ sender: keyof typeof senders; first: Request; again: Request }> = [
      {
        sender: "stripe",
        first: post(
          { "stripe-signature": "t=1,v1=abc" },
          { id: `evt_${id}`, object: "event", type: "payment_intent.succeeded", data: { object: {} } },
        ),
        again: post(
          { "stripe-signature": "t=2,v1=def" },
          { id: `evt_${id}`, object: "event", type: "payment_intent.succeeded", data: { object: {} } },
        ),
      },
      {
        sender: "github",
        first: post({ "x-github-delivery": `gh-${id}`, "x-github-event": "push", "x-hub-signature-256": "sha256=abc" }, { ref: "refs/heads/main" }),
        again: post({ "x-github-delivery": `gh-${id}`, "x-github-event": "push", "x-hub-signature-256": "sha256=abc" }, { ref: "refs/heads/main" }),
      },
      {
        sender: "shopify",
        first: post(
          { "x-shopify-webhook-id": `sh-${id}`, "x-shopify-topic": "orders/create", "x-shopify-hmac-sha256": "abc=" },
          { id: 820982911946154500 },
        ),
        again: post(
          { "x-shopify-webhook-id": `sh-${id}`, "x-shopify-topic": "orders/create", "x-shopify-hmac-sha256": "abc=" },
          { id: 820982911946154500 },
        ),
      },
      {
        sender: "slack",
        first: post(
          { "x-slack-signature": "v0=abc", "x-slack-request-timestamp": "1" },
          { type: "event_callback", event_id: `Ev${id}`, event: { type: "message" } },
        ),
        again: post(
          { "x-slack-signature": "v0=abc", "x-slack-request-timestamp": "2", "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" },
          { type: "event_callback", event_id: `Ev${id}`, event: { type: "message" } },
        ),
      },
      {
        sender: "standardWebhooks",
        first: post({ "webhook-id": `msg_${id}`, "webhook-timestamp": "1", "webhook-signature": "v1,abc" }, { type: "invoice.paid" }),
        again: post({ "webhook-id": `msg_${id}`, "webhook-timestamp": "2", "webhook-signature": "v1,def" }, { type: "invoice.paid" }),
      },
    ];

    for (const { sender, first, again } of deliveries) {
      it(`${sender}: a redelivery of the same event is replayed, not run again`, async () => {
        let runs = 0;
        const wrapped = idempotent(
          async () => {
            runs++;
            return new Response("processed", { status: 200 });
          },
          // A signature changes between attempts (its timestamp): the fingerprint is the event's identity alone.
          { ...keys(), ttlMs: 5000, key: senders[sender], required: true, fingerprint: () => "the event" },
        );
        expect((await wrapped(first)).status).toBe(200);
        const redelivered = await wrapped(again);
        expect(redelivered.headers.get("idempotent-replayed")).toBe("true");
        expect(runs).toBe(1);
      });
    }
  });
});

describe("idempotent(handler) over a holdfast service that cannot serve it", () => {
  const wrapped = (client: HoldfastClient) => {
    const runs: number[] = [];
    const handler = async () => {
      runs.push(1);
      return new Response("ran");
    };
    return { runs, h: idempotent(handler, { client, ttlMs: 5000 }) };
  };

  it("a refused API key is 503 not_configured (as Redis refusing its token is), and the handler does not run", async () => {
    const { runs, h } = wrapped(new HoldfastClient({ baseUrl: service().url, apiKey: "not-a-key-of-this-service" }));
    const res = await h(post({ "idempotency-key": unique("refused") }, { a: 1 }));
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: "not_configured", message: expect.stringContaining("apiKey") });
    expect(runs).toHaveLength(0);
  });

  it("a service that does not answer is 503 store_unavailable, so the sender retries later; the handler does not run", async () => {
    const { runs, h } = wrapped(new HoldfastClient({ baseUrl: "http://127.0.0.1:9", apiKey: LOCAL_API_KEY, timeoutMs: 500 }));
    const res = await h(post({ "idempotency-key": unique("unreachable") }, { a: 1 }));
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: "store_unavailable" });
    expect(runs).toHaveLength(0);
  });
});
