// The library over a real @upstash/redis client with its own defaults (five retries over about four
// seconds) and nothing listening at the Redis URL: every entry says so within a second, with the URL and
// "connection refused", not as a store too slow to answer within its 2 s deadline.
import { Redis } from "@upstash/redis";
import { expect, it } from "vitest";
import { Idempotency, Mutex, runOnce, Semaphore, StoreUnavailableError } from "holdfast";
import { closedPort } from "../support/closedPort";

const WITHIN_MS = 1000;

for (const [what, call] of [
  ["Mutex.acquire", (redis: Redis) => new Mutex(redis, "nightly-report").acquire({ ttlMs: 30_000 })],
  ["Semaphore.acquire with a wait", (redis: Redis) => new Semaphore(redis, "pdf-exports", { limit: 2 }).acquire({ ttlMs: 30_000, waitMs: 10_000 })],
  ["Idempotency.inspect", (redis: Redis) => new Idempotency(redis).inspect("export-42")],
  ["runOnce", (redis: Redis) => runOnce("export-42", async () => "done", { redis, ttlMs: 30_000 })],
] as const) {
  it(`${what}: nothing listening at the Redis URL is StoreUnavailableError within 1 s naming it and "connection refused"`, async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const redis = new Redis({ url, token: "local-token", enableTelemetry: false });
    const started = performance.now();
    const err = await call(redis).catch((e: unknown) => e);
    const tookMs = performance.now() - started;
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toContain(`the store at ${url} refused the connection`);
    expect((err as Error).message).toMatch(/connection refused/);
    expect(tookMs).toBeLessThan(WITHIN_MS);
  });
}
