// holdfast/client with nothing listening at its baseUrl: the refused connection is said at once, with the
// URL and the cause, not retried until the deadline as a slow network would be.
import { expect, it } from "vitest";
import { HoldfastClient, UnreachableError } from "../../src/client/index";
import { closedPort } from "../support/closedPort";

/** Loopback refuses at once; a second is ample on a busy machine and far below the deadline a retry would run to. */
const WITHIN_MS = 1000;

for (const [what, call] of [
  ["a try-lock", (client: HoldfastClient) => client.lock("nightly-report", { ttlMs: 30_000 })],
  ["a wait (socket, then HTTP)", (client: HoldfastClient) => client.lock("nightly-report", { ttlMs: 30_000, waitMs: 10_000 })],
  ["an idempotency key", (client: HoldfastClient) => client.runOnce("export-42", async () => "done", { ttlMs: 30_000 })],
] as const) {
  it(`${what}: nothing listening is UnreachableError within 1 s naming the URL and "connection refused"`, async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;
    const client = new HoldfastClient({ baseUrl, apiKey: "holdfast-local-dev-key", timeoutMs: 30_000 });
    const started = performance.now();
    const err = await call(client).catch((e: unknown) => e);
    const tookMs = performance.now() - started;
    expect(err).toBeInstanceOf(UnreachableError);
    expect((err as Error).message).toContain(baseUrl);
    expect((err as Error).message).toMatch(/connection refused/);
    expect(tookMs).toBeLessThan(WITHIN_MS);
  });
}
