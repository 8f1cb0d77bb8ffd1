// A grant from the line must be picked up within PICKUP_MS, or the lock object takes it back and grants the next
// waiter (docs/API.md, "Pickup of a grant from the line"). Over HTTP the pickup is the Worker's confirmation that
// the answer's body was taken whole (src/http/deliveryConfirmed.ts). A connection that takes the body late, but
// within the pickup time, cannot be caused for real: workerd hands a 200-byte answer to the kernel at once, however
// slowly the client reads. So the connection here is this test's reader (it takes the body when told), and the lock
// object is a GrantDelivery that records what it is told. Both are stand-ins, for that reason only.
import type { Context } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonWithDeliveryConfirmed } from "../../src/http/deliveryConfirmed";
import { PICKUP_MS } from "../../src/limits";

afterEach(() => {
  vi.useRealTimers();
});

/** An answer with its delivery recorded, and what the Worker keeps running after it (waitUntil). */
function answered() {
  const told: string[] = [];
  const after: Array<Promise<unknown>> = [];
  const c = { executionCtx: { waitUntil: (p: Promise<unknown>) => after.push(p) } } as unknown as Context;
  const response = jsonWithDeliveryConfirmed(
    c,
    { token: "line-token", fence: 7, ttlMs: 5000 },
    {
      confirm: async () => told.push("confirm"),
      takeBack: async () => told.push("takeBack"),
    },
  );
  return { response, told, after };
}

describe("an HTTP grant's delivery", () => {
  it("is confirmed when its body is taken after 1.5 s but within the pickup time, so the lock object keeps the grant", async () => {
    vi.useFakeTimers();
    const { response, told, after } = answered();
    const body = (response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    chunks.push((await body.read()).value as Uint8Array); // all but the last byte
    const last = body.read(); // the last byte, held back a turn
    await vi.advanceTimersByTimeAsync(0);
    chunks.push((await last).value as Uint8Array);
    // The connection takes the rest late: the client has the whole answer 1.6 s after it was made, before the pickup time.
    await vi.advanceTimersByTimeAsync(1600);
    expect(1600).toBeLessThan(PICKUP_MS);
    expect((await body.read()).done).toBe(true);
    await Promise.all(after);
    expect(JSON.parse(Buffer.concat(chunks).toString())).toMatchObject({ token: "line-token" });
    // The holder has its grant: the lock object must hear so before it takes the grant back and grants the next waiter.
    expect(told).toEqual(["confirm"]);
  });
});
