// The idempotency library over a real @upstash/redis client, through the local Upstash
// gateway in front of a real redis-server: runOnce, the Idempotency class, the Redis
// store's retry safety, and the Hono middleware on a small app.
import { randomUUID } from "node:crypto";
import { Redis } from "@upstash/redis";
import { Hono } from "hono";
import { describe, expect, inject, it } from "vitest";
import {
  Idempotency,
  InProgressError,
  InvalidInputError,
  LeaseLostError,
  RedisStore,
  TooLargeError,
  fromHeader,
  fromJsonBody,
  idempotency,
  runOnce,
} from "holdfast";

const redis = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken"), enableTelemetry: false });
// Other test files share this Redis: a namespace of our own keeps keys apart.
const namespace = `lib-${randomUUID().slice(0, 8)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;
const uniqueKey = (label: string) => `${label}-${Date.now().toString(36)}-${++n}`;

/** Waits until the key's work has started (a condition, not a fixed sleep). */
async function untilStarted(key: string): Promise<void> {
  const idem = new Idempotency(redis, { namespace });
  const end = Date.now() + 5000;
  while ((await idem.inspect(key)).state !== "started") {
    if (Date.now() > end) throw new Error(`${key} never started`);
    await sleep(10);
  }
}

/** A promise the test settles when it chooses: the running caller's work. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}

describe("runOnce", () => {
  it("runs fn exactly once for 20 concurrent callers, and every caller gets its result", async () => {
    const key = uniqueKey("daily-report");
    let runs = 0;
    const job = async () => {
      runs += 1;
      await sleep(300);
      return { rows: 42, day: "2026-11-21" };
    };
    const results = await Promise.all(Array.from({ length: 20 }, () => runOnce(key, job, { redis, namespace, ttlMs: 2000, waitMs: 5000 })));
    expect(runs).toBe(1);
    for (const r of results) expect(r).toEqual({ rows: 42, day: "2026-11-21" });

    // Later callers get the stored result without running fn.
    expect(await runOnce(key, job, { redis, namespace, ttlMs: 2000 })).toEqual({ rows: 42, day: "2026-11-21" });
    expect(runs).toBe(1);
  });

  it("when fn throws, the key is failed (free again) and the error is rethrown", async () => {
    const key = uniqueKey("flaky");
    const boom = new Error("upstream 502");
    await expect(runOnce(key, async () => Promise.reject(boom), { redis, namespace, ttlMs: 2000 })).rejects.toBe(boom);
    const idem = new Idempotency(redis, { namespace });
    expect(await idem.inspect(key)).toEqual({ state: "absent" });

    let runs = 0;
    const value = await runOnce(key, async () => ++runs, { redis, namespace, ttlMs: 2000 });
    expect(value).toBe(1);
    expect(runs).toBe(1);
    expect(await idem.inspect(key)).toMatchObject({ state: "completed", response: 1 });
  });

  it("heartbeats a run that outlasts its ttl, so nobody else starts it meanwhile", async () => {
    const key = uniqueKey("long");
    let aborted = false;
    const running = runOnce(
      key,
      async ({ signal }) => {
        await sleep(2500);
        aborted = signal.aborted;
        return "finished";
      },
      // Heartbeats every ttl/3: at 1000 ms each may be a few hundred ms late on a busy machine and still keep it.
      { redis, namespace, ttlMs: 1000 },
    );
    await sleep(2000); // twice the ttl: only heartbeats keep the start alive
    await expect(runOnce(key, async () => "second", { redis, namespace, ttlMs: 1000 })).rejects.toBeInstanceOf(InProgressError);
    expect(await running).toBe("finished");
    expect(aborted).toBe(false);
  });

  it("without waitMs an overlapping caller gets InProgressError with retryAfterMs", async () => {
    const key = uniqueKey("overlap");
    const work = gate();
    const first = runOnce(key, () => work.opened.then(() => "first"), { redis, namespace, ttlMs: 5000 });
    await untilStarted(key);
    const err = await runOnce(key, async () => "second", { redis, namespace, ttlMs: 5000 }).catch((e) => e);
    expect(err).toBeInstanceOf(InProgressError);
    expect(err.retryAfterMs).toBeGreaterThan(0);
    expect(err.retryAfterMs).toBeLessThanOrEqual(5000);
    work.open();
    expect(await first).toBe("first");
  });

  it("aborts fn's signal when a heartbeat finds the lease gone, and does not record the result", async () => {
    const key = uniqueKey("evicted");
    let reason: unknown;
    const running = runOnce(
      key,
      ({ signal }) =>
        new Promise<string>((resolve) => {
          signal.addEventListener("abort", () => {
            reason = signal.reason;
            resolve("stopped early");
          });
        }),
      { redis, namespace, ttlMs: 600 },
    );
    await untilStarted(key);
    // The record vanishes under the running owner (an eviction, a flush): its heartbeat is refused.
    await redis.del(`hf:{id:${namespace}:${key}}`);
    await expect(running).rejects.toBeInstanceOf(LeaseLostError);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(await new Idempotency(redis, { namespace }).inspect(key)).toEqual({ state: "absent" });
  });

  it("a waiter takes the work over when the running caller fails", async () => {
    const key = uniqueKey("takeover");
    const work = gate();
    const first = runOnce(key, () => work.opened.then(() => Promise.reject(new Error("first failed"))), { redis, namespace, ttlMs: 5000 });
    await untilStarted(key);
    const second = runOnce(key, async () => "second ran", { redis, namespace, ttlMs: 5000, waitMs: 3000 });
    // The second was told in_progress (begin marks the record `w` when it says so): it waits.
    for (let i = 0; i < 500 && (await redis.hget(`hf:{id:${namespace}:${key}}`, "w")) === null; i++) await sleep(10);
    expect(await redis.hget(`hf:{id:${namespace}:${key}}`, "w")).not.toBeNull();
    work.open();
    await expect(first).rejects.toThrow("first failed");
    expect(await second).toBe("second ran");
  });
});

describe("Idempotency over @upstash/redis with automatic deserialization", () => {
  const idem = new Idempotency(redis, { namespace });

  it("returns stored responses exactly, even ones a JSON-parsing client would change", async () => {
    for (const response of ["123", '"quoted"', "null", null, 0, "hf_like", [1, "2"], { a: { b: "ü" } }]) {
      const key = uniqueKey("exact");
      const s = await idem.begin(key, { ttlMs: 2000 });
      if (s.state !== "started") throw new Error("expected a start");
      await idem.complete(key, s.token, response);
      expect(await idem.begin(key, { ttlMs: 2000 })).toMatchObject({ state: "completed", response });
      expect(await idem.inspect(key)).toMatchObject({ state: "completed", response });
    }
  });

  it("refuses a response whose JSON is over 64 KiB and changes nothing", async () => {
    const key = uniqueKey("too-big");
    const s = await idem.begin(key, { ttlMs: 2000 });
    if (s.state !== "started") throw new Error("expected a start");
    await expect(idem.complete(key, s.token, "x".repeat(65_535))).rejects.toBeInstanceOf(TooLargeError); // 65_537 bytes with quotes
    expect(await idem.inspect(key)).toMatchObject({ state: "started", fence: s.fence });
    await idem.complete(key, s.token, "x".repeat(65_534)); // exactly 65_536
  });

  it("a retried begin or complete (same request id) gets the first answer", async () => {
    const store = new RedisStore(redis);
    const ref = { ns: namespace, name: uniqueKey("retry") };
    const input = { token: "hf_first", ttlMs: 2000, retainMs: 60_000, requestId: `rq_${randomUUID()}` };
    const first = await store.idempotency.begin(ref, input);
    const retried = await store.idempotency.begin(ref, { ...input, token: "hf_second" });
    expect(first).toMatchObject({ status: "started", token: "hf_first" });
    expect(retried).toEqual(first);
    const other = await store.idempotency.begin(ref, { ...input, token: "hf_third", requestId: `rq_${randomUUID()}` });
    expect(other.status).toBe("in_progress");

    const complete = { token: "hf_first", responseJson: '{"ok":true}', requestId: `rq_${randomUUID()}` };
    const done = await store.idempotency.complete(ref, complete);
    expect(done.status).toBe("ok");
    expect(await store.idempotency.complete(ref, complete)).toEqual(done);
    expect(await store.idempotency.complete(ref, { ...complete, requestId: `rq_${randomUUID()}` })).toEqual({ status: "lost" });
  });
});

describe("idempotency middleware", () => {
  /** A payments webhook receiver: events are retried by the sender and must be handled once. */
  function paymentsApp(options: { failFirst?: "throw" | "503"; handlerMs?: number } = {}) {
    const handled: string[] = [];
    let failuresLeft = options.failFirst ? 1 : 0;
    const app = new Hono();
    // The app's own error handler (Hono's default also logs the error).
    app.onError((_err, c) => c.json({ error: "internal" }, 500));
    app.post("/webhooks/payments", idempotency({ redis, namespace, key: fromJsonBody("id"), ttlMs: 5000 }), async (c) => {
      const event = await c.req.json<{ id: string; type: string; data: { amount: number } }>();
      await sleep(options.handlerMs ?? 200);
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        if (options.failFirst === "throw") throw new Error("ledger unavailable");
        return c.json({ error: "ledger unavailable" }, 503);
      }
      handled.push(event.id);
      c.header("x-ledger-entry", `le_${event.id}`);
      return c.json({ received: event.id, credited: event.data.amount }, 201);
    });
    const deliver = (event: object, headers: Record<string, string> = {}) =>
      app.request("/webhooks/payments", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(event),
      });
    return { app, handled, deliver };
  }
  const eventOf = (id: string, amount = 4200) => ({ id, type: "payment_intent.succeeded", data: { amount } });

  it("10 concurrent deliveries of one event: the handler runs once, the rest get 409 or the replay", async () => {
    const { handled, deliver } = paymentsApp();
    const event = eventOf(uniqueKey("evt"));
    const responses = await Promise.all(Array.from({ length: 10 }, () => deliver(event)));
    expect(handled).toEqual([event.id]);

    const bodies = await Promise.all(responses.map(async (r) => ({ r, body: (await r.json()) as any })));
    const original = bodies.filter(({ r }) => r.status === 201 && !r.headers.has("idempotent-replayed"));
    expect(original).toHaveLength(1);
    expect(original[0].body).toEqual({ received: event.id, credited: 4200 });
    for (const { r, body } of bodies) {
      if (r.status === 409) {
        expect(body.error).toBe("in_progress");
        expect(body.retryAfterMs).toBeGreaterThan(0);
        expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      } else {
        expect(r.status).toBe(201);
        expect(body).toEqual(original[0].body);
      }
    }

    // The sender's retry after the first one finished: same status, body and kept headers.
    const replay = await deliver(event);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("content-type")).toBe(original[0].r.headers.get("content-type"));
    expect(replay.headers.has("x-ledger-entry")).toBe(false); // not listed in keepHeaders
    expect(await replay.json()).toEqual(original[0].body);
    expect(handled).toHaveLength(1);
  });

  it("a handler that throws releases the key, so the sender's retry runs it", async () => {
    const { handled, deliver } = paymentsApp({ failFirst: "throw", handlerMs: 10 });
    const event = eventOf(uniqueKey("evt-throw"));
    const first = await deliver(event);
    expect(first.status).toBe(500);
    expect(await new Idempotency(redis, { namespace }).inspect(event.id)).toEqual({ state: "absent" });
    const retry = await deliver(event);
    expect(retry.status).toBe(201);
    expect(retry.headers.has("idempotent-replayed")).toBe(false);
    expect(handled).toEqual([event.id]);
  });

  it("a 5xx answer releases the key too", async () => {
    const { handled, deliver } = paymentsApp({ failFirst: "503", handlerMs: 10 });
    const event = eventOf(uniqueKey("evt-503"));
    expect((await deliver(event)).status).toBe(503);
    expect((await deliver(event)).status).toBe(201);
    expect((await deliver(event)).headers.get("idempotent-replayed")).toBe("true");
    expect(handled).toEqual([event.id]);
  });

  it("the same event id with a different payload is 422 fingerprint_mismatch", async () => {
    const { handled, deliver } = paymentsApp({ handlerMs: 10 });
    const id = uniqueKey("evt-fp");
    expect((await deliver(eventOf(id, 100))).status).toBe(201);
    const tampered = await deliver(eventOf(id, 999_999));
    expect(tampered.status).toBe(422);
    expect(((await tampered.json()) as any).error).toBe("fingerprint_mismatch");
    expect(handled).toEqual([id]);
  });

  it("without a key the handler just runs", async () => {
    const { handled, deliver } = paymentsApp({ handlerMs: 1 });
    await deliver({ type: "ping", data: { amount: 0 } });
    await deliver({ type: "ping", data: { amount: 0 } });
    expect(handled).toHaveLength(2);
  });

  it("takes the Idempotency-Key header by default, or a delivery header, and replays listed headers", async () => {
    let runs = 0;
    const app = new Hono();
    app.post("/orders", idempotency({ redis, namespace, ttlMs: 5000, keepHeaders: ["x-order-id"] }), (c) => {
      runs += 1;
      c.header("location", "/orders/7");
      c.header("x-order-id", "7");
      return c.text("created", 201);
    });
    app.post("/github", idempotency({ redis, namespace, ttlMs: 5000, key: fromHeader("x-github-delivery") }), (c) => {
      runs += 1;
      return c.body(null, 204);
    });
    const key = uniqueKey("order");
    const order = () => app.request("/orders", { method: "POST", headers: { "idempotency-key": key }, body: "qty=1" });
    const first = await order();
    const again = await order();
    expect(again.status).toBe(201);
    expect(await again.text()).toBe(await first.text());
    expect(again.headers.get("location")).toBe("/orders/7");
    expect(again.headers.get("x-order-id")).toBe("7");
    expect(again.headers.get("idempotent-replayed")).toBe("true");

    const delivery = randomUUID();
    const hook = () => app.request("/github", { method: "POST", headers: { "x-github-delivery": delivery }, body: "{}" });
    expect((await hook()).status).toBe(204);
    const replayed = await hook();
    expect(replayed.status).toBe(204);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(runs).toBe(2);
  });
});

describe("Idempotency: bad input changes nothing and names the field", () => {
  it("refuses a bad namespace, key, ttlMs or retainMs with InvalidInputError before touching the store", async () => {
    expect(() => new Idempotency(redis, { namespace: "a:b" })).toThrow(expect.objectContaining({ code: "invalid_namespace" }));
    const idem = new Idempotency(redis, { namespace });
    const key = uniqueKey("bad-input");
    for (const [options, code] of [
      [{ ttlMs: 1500.5 }, "invalid_ttl"],
      [{ ttlMs: -1 }, "invalid_ttl"],
      [{ ttlMs: 1000, retainMs: 10 }, "invalid_retain"],
    ] as const) {
      const err = await idem.begin(key, options).catch((e) => e);
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err.code).toBe(code);
    }
    await expect(idem.begin("a b", { ttlMs: 1000 })).rejects.toMatchObject({ code: "invalid_name" });
    expect(await idem.inspect(key)).toEqual({ state: "absent" });
    expect(await redis.exists(`hf:{id:${namespace}:${key}}`)).toBe(0);
  });
});
