import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { expect, it } from "vitest";
import { HoldfastClient, RateLimitedError } from "../../src/client/index";
import worker from "../../src/worker";
import { api, KEY_A, KEY_B, type StoreKind, uniqueName } from "../support/workers/api";

/**
 * Bad input sent on purpose (issue #14): bodies that never end, JSON that
 * nests without end, names no URL can reach, wrong methods, broken key
 * configuration. Each is a 4xx (or 503 for the configuration) naming the
 * problem, never a 5xx, and changes nothing.
 */
export function hostileInputConformance(kind: StoreKind) {
  const { post, get, call, env } = api(kind);

  it("a chunked body with no Content-Length is cut off at 64 KiB: 413, and the rest is never read", async () => {
    const name = uniqueName("chunked");
    let sent = 0;
    const chunk = new TextEncoder().encode(" ".repeat(16 * 1024));
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 100 * 1024 * 1024) return controller.close(); // 100 MiB, if anyone read it all
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request(`http://holdfast.test/v1/locks/${name}/acquire`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY_A}`, "content-type": "application/json" },
        body,
      }),
      env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe("too_large");
    expect(sent).toBeLessThan(1024 * 1024);
    expect((await get(`/v1/locks/${name}`)).body.held).toBe(false);
  });

  it("JSON nested deeper than 64 levels is 400 naming the limit, also as an idempotency response", async () => {
    const name = uniqueName("deep");
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    const acquire = await call("POST", `/v1/locks/${name}/acquire`, undefined, { raw: `{"ttlMs":1000,"x":${deep(10_000)}}` });
    expect(acquire.status).toBe(400);
    expect(acquire.body).toMatchObject({ error: "invalid_body" });
    expect(acquire.body.message).toMatch(/64 levels/);
    const key = uniqueName("deep-key");
    const begun = (await post(`/v1/idempotency/${key}/begin`, { ttlMs: 5000 })).body;
    for (const depth of [2_000, 10_000]) {
      const res = await call("POST", `/v1/idempotency/${key}/complete`, undefined, { raw: `{"token":"${begun.token}","response":${deep(depth)}}` });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/64 levels/);
    }
    expect((await get(`/v1/idempotency/${key}`)).body.state).toBe("started");
    // 63 levels inside the body's own object is within the limit.
    const ok = await call("POST", `/v1/idempotency/${key}/complete`, undefined, { raw: `{"token":"${begun.token}","response":${deep(63)}}` });
    expect(ok.status).toBe(200);
  });

  it("a wrong method on a known route is 405 with Allow; an unknown route stays 404", async () => {
    const name = uniqueName("method");
    const wrong = await call("GET", `/v1/locks/${name}/acquire`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
    expect(wrong.body.error).toBe("method_not_allowed");
    const del = await call("DELETE", `/v1/locks/${name}`);
    expect(del.status).toBe(405);
    expect(del.headers.get("allow")).toBe("GET, HEAD");
    const rw = await call("PUT", `/v1/rwlocks/${name}/write/acquire`);
    expect(rw.status).toBe(405);
    expect(rw.headers.get("allow")).toBe("POST");
    expect((await call("GET", `/v1/locks/${name}/nothing-here`)).status).toBe(404);
    expect((await call("POST", "/healthz")).headers.get("allow")).toBe("GET, HEAD");
  });

  it("a broken API_KEYS entry is named by position and never echoed (the log says the same); one key in two namespaces is refused; /healthz says so", async () => {
    const secret = "key-beta-1234567890";
    for (const [apiKeys, why] of [
      [`alpha=key-alpha-1234567890,${secret}`, /entry 2 of 2/],
      // A key under 8 characters is refused, not taken: the whole service answers 503 until it is fixed.
      [`alpha=key-alpha-1234567890,beta=short77`, /entry 2 of 2 .*a key of 8\+ characters/],
      [`alpha=${secret},beta=${secret}`, /entries 1 and 2 give one key to two namespaces/],
      [`alpha=${secret},alpha:admin:ops=${secret}`, /entries 1 and 2 give one key two roles or names/],
      [`alpha:root=${secret}`, /entry 1 of 1 is not namespace\[:role\[:name\]\]=key/],
      [`alpha:admin:bad name=${secret}`, /entry 1 of 1/],
    ] as const) {
      const broken = api(kind, { API_KEYS: apiKeys });
      const res = await broken.post(`/v1/locks/${uniqueName("cfg")}/acquire`, { ttlMs: 1000 }, { key: null });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe("not_configured");
      expect(res.body.message).toMatch(why);
      const health = await broken.get("/healthz", { key: null });
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ status: "not_configured", error: "not_configured" });
      for (const text of [JSON.stringify(res.body), JSON.stringify(health.body)]) {
        expect(text).not.toContain(secret.slice(0, 8));
      }
    }
    // One namespace with two keys is a key rotation: both work.
    const rotating = api(kind, { API_KEYS: "alpha=old-key-12345678,alpha=new-key-12345678" });
    for (const key of ["old-key-12345678", "new-key-12345678"]) {
      expect((await rotating.get(`/v1/locks/${uniqueName("rot")}`, { key })).status).toBe(200);
    }
  });

  it("onExpire never points at loopback, private, link-local or internal addresses, however written", async () => {
    const targets = [
      "https://127.0.0.1/hook",
      "https://2130706433/hook", // 127.0.0.1 as one number
      "https://0x7f.1/hook",
      "https://[::1]/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://[::127.0.0.1]/hook", // IPv4-compatible, parsed as [::7f00:1]
      "https://[::ffff:a9fe:a9fe]/latest/meta-data/", // 169.254.169.254, mapped
      "https://localhost./hook", // a root-zone dot
      "https://0/hook", // 0.0.0.0
      "https://169.254.169.254/latest/meta-data/",
      "https://10.1.2.3/hook",
      "https://172.16.0.1/hook",
      "https://192.168.1.1/hook",
      "https://100.64.0.1/hook",
      "https://[fd00::1]/hook",
      "https://[fe80::1]/hook",
      "https://localhost/hook",
      "https://metadata.google.internal/computeMetadata/v1/",
      "https://printer.local/hook",
      "https://intranet/hook",
      "https://user:pass@hooks.tenant-a.example/hook",
    ];
    // In production (no local-development switch), even with every host allowed, none of these is a receiver.
    const open = api(kind, {
      ONEXPIRE_HOSTS:
        "*=127.0.0.1|localhost|*.internal|*.local|intranet|hooks.tenant-a.example|169.254.169.254|::7f00:1|::ffff:a9fe:a9fe|0.0.0.0|10.1.2.3|fd00::1",
      ONEXPIRE_ALLOW_HTTP_LOCALHOST: undefined,
    });
    for (const onExpire of targets) {
      const name = uniqueName("ssrf");
      const res = await open.post(`/v1/locks/${name}/acquire`, { ttlMs: 1000, onExpire });
      expect(res.status, onExpire).toBe(400);
      expect(res.body.error).toBe("invalid_on_expire");
      expect((await get(`/v1/locks/${name}`)).body.held).toBe(false);
    }
  });

  it("onExpire is https to an allow-listed host of the caller's namespace; http only to localhost in local development", async () => {
    const name = uniqueName("allow");
    const ok = await post(`/v1/locks/${name}/acquire`, { ttlMs: 1000, onExpire: "https://hooks.tenant-a.example/lapsed" });
    expect(ok.status).toBe(200);
    const sem = await post(`/v1/semaphores/${name}/acquire`, { limit: 1, ttlMs: 1000, onExpire: "https://a.hooks.example/x" });
    expect(sem.status).toBe(200);
    // Released on purpose: nothing is sent to hosts this machine cannot reach.
    await post(`/v1/locks/${name}/release`, { token: ok.body.token });
    await post(`/v1/semaphores/${name}/release`, { token: sem.body.token });
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["https://evil.example/collect", {}, /not on this namespace's allow-list/],
      ["https://hooks.example/x", {}, /not on this namespace's allow-list/], // *.hooks.example is subdomains only
      ["http://hooks.tenant-a.example/lapsed", {}, /must be an https URL/],
      ["http://127.0.0.1:9/hook", { ONEXPIRE_ALLOW_HTTP_LOCALHOST: undefined }, /must be an https URL/],
      ["https://hooks.tenant-a.example/lapsed", { ONEXPIRE_HOSTS: undefined }, /not enabled for this namespace/],
    ];
    for (const [onExpire, overrides, why] of cases) {
      const other = uniqueName("allow");
      const res = await api(kind, overrides).post(`/v1/rwlocks/${other}/write/acquire`, { ttlMs: 1000, onExpire });
      expect(res.status, onExpire).toBe(400);
      expect(res.body).toMatchObject({ error: "invalid_on_expire" });
      expect(res.body.message).toMatch(why);
    }
    // Another namespace's allow-list is not this one's: tenant-b may not aim at tenant-a's receiver.
    const b = await post(
      `/v1/idempotency/${uniqueName("b")}/begin`,
      { ttlMs: 1000, onExpire: "https://hooks.tenant-a.example/lapsed" },
      { key: KEY_B },
    );
    expect(b.status).toBe(400);
    expect(b.body.message).toMatch(/allow-list/);
  });

  it("a namespace over its request budget gets 429 rate_limited with Retry-After, and other namespaces do not", async () => {
    const limited = api(kind, { RATE_LIMIT_TIERS: "tenant-a=low,*=off" });
    const name = uniqueName("flood");
    // The low tier allows 100 requests per 10 s window: 250 overflow it even across a window's end.
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof limited.get>> | undefined;
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 25 }, () => limited.get(`/v1/locks/${name}`)));
      for (const a of answers) {
        statuses.push(a.status);
        if (a.status === 429) refused = a;
      }
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(refused?.body).toMatchObject({ error: "rate_limited" });
    expect(refused?.body.retryAfterMs).toBeGreaterThan(0);
    expect(refused?.body.retryAfterMs).toBeLessThanOrEqual(10_000);
    expect(Number(refused?.headers.get("retry-after"))).toBe(Math.ceil((refused?.body.retryAfterMs ?? 0) / 1000));
    // A write refused for the budget changes nothing; another namespace is not held back.
    // Writes go on (each counts) until one is refused, however the window has moved since the flood: 25 at
    // once, as the reads above, since one after another on a busy runner (100 ms each) they only keep pace
    // with the window (100 per 10 s) and none is refused.
    let refusedWrite: string | undefined;
    for (let batch = 0; batch < 10 && refusedWrite === undefined; batch++) {
      const locks = Array.from({ length: 25 }, (_, i) => `${name}-w${batch * 25 + i}`);
      const answers = await Promise.all(locks.map((lock) => limited.post(`/v1/locks/${lock}/acquire`, { ttlMs: 5000 })));
      refusedWrite = locks.find((_, i) => answers[i].status === 429);
    }
    expect(refusedWrite).toBeDefined();
    expect((await get(`/v1/locks/${refusedWrite}`)).body.held).toBe(false);
    expect((await limited.get(`/v1/locks/${name}`, { key: KEY_B })).status).toBe(200);

    // The client sees it as RateLimitedError, retried only while the wait fits its deadline.
    const client = new HoldfastClient({
      baseUrl: "http://holdfast.test",
      apiKey: KEY_A,
      timeoutMs: 300,
      fetch: async (input, init) => worker.fetch(new Request(input as string, init), limited.env, createExecutionContext()),
    });
    // Each call counts toward the budget, so however the window has moved since the flood, one of
    // these overflows it again (25 at once, for the reason above).
    let err: unknown;
    for (let batch = 0; batch < 10 && !(err instanceof RateLimitedError); batch++) {
      const errs = await Promise.all(Array.from({ length: 25 }, () => client.inspect("mutex", name).catch((e) => e)));
      err = errs.find((e) => e instanceof RateLimitedError) ?? errs[0];
    }
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan(0);
  });
}
