import { Hono } from "hono";
import { Idempotency } from "../../primitives/Idempotency";
import { roomFor } from "../../room/roomClient";
import { requireWebhookSecret } from "../onExpire";
import type { AppEnv } from "../appTypes";
import { lockName } from "../lockName";
import { readBody } from "../readBody";
import { heartbeatBody, idempotencyBeginBody, idempotencyCompleteBody, idempotencyFailBody } from "../schemas";

/** /v1/idempotency/{key}: webhook deduplication and run-once jobs. */
export const idempotencyRoutes = new Hono<AppEnv>();

function idempotencyOf(c: { var: AppEnv["Variables"] }) {
  return new Idempotency(c.var.store, { namespace: c.var.ns });
}

idempotencyRoutes.post("/:key/begin", async (c) => {
  const key = lockName(c, "key");
  const body = await readBody(c, idempotencyBeginBody);
  if (body.onExpire) requireWebhookSecret(c.env);
  const r = await idempotencyOf(c).begin(key, { ttlMs: body.ttlMs, retainMs: body.retainMs, fingerprint: body.fingerprint });
  if (r.state === "started") {
    // The room's alarm checks the start at its deadline; a heartbeat that moved
    // the deadline or a completion is seen there, so only fail must tell it.
    if (body.onExpire) {
      await roomFor(c.env, c.var.ns, "idempotency", key).watch({ fence: r.fence, expiresAt: r.expiresAt, onExpire: body.onExpire });
    }
    return c.json({ state: r.state, token: r.token, fence: r.fence }, 201);
  }
  return c.json({ state: r.state, response: r.response, completedAt: r.completedAt }, 200);
});

idempotencyRoutes.post("/:key/heartbeat", async (c) => {
  const key = lockName(c, "key");
  const body = await readBody(c, heartbeatBody);
  const r = await idempotencyOf(c).heartbeat(key, body.token, body.ttlMs);
  return c.json({ expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence }, 200);
});

idempotencyRoutes.post("/:key/complete", async (c) => {
  const key = lockName(c, "key");
  const body = await readBody(c, idempotencyCompleteBody);
  const r = await idempotencyOf(c).complete(key, body.token, body.response);
  return c.json({ state: "completed", completedAt: r.completedAt, fence: r.fence }, 200);
});

idempotencyRoutes.post("/:key/fail", async (c) => {
  const key = lockName(c, "key");
  const body = await readBody(c, idempotencyFailBody);
  const { fence } = await idempotencyOf(c).fail(key, body.token);
  // Given up on purpose is not a vanished owner: no expiry notification.
  await roomFor(c.env, c.var.ns, "idempotency", key).released(fence);
  return c.json({ state: "absent" }, 200);
});

idempotencyRoutes.get("/:key", async (c) => {
  const key = lockName(c, "key");
  return c.json(await idempotencyOf(c).inspect(key), 200);
});
