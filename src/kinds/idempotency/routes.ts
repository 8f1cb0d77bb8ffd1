import { honoApp } from "../../http/honoApp.js";
import { lockName } from "../../http/lockName.js";
import { readBody } from "../../http/readBody.js";
import { heartbeatBody } from "../../wire/schemas.js";
import { serviceContext } from "../../http/serviceContextOf.js";
import { idempotencyBeginBody, idempotencyCompleteBody, idempotencyFailBody } from "./schemas.js";
import { beginIdempotency, completeIdempotency, failIdempotency, heartbeatIdempotency, inspectIdempotency } from "./service.js";

/** /v1/idempotency/{key}: webhook deduplication and run-once jobs. Validation here, everything else in ./service. */
export const idempotencyRoutes = honoApp();

idempotencyRoutes.post("/:key/begin", async (c) => {
  const key = lockName(c, "key");
  const body = await readBody(c, idempotencyBeginBody);
  const r = await beginIdempotency(serviceContext(c), key, body);
  if (r.state === "started") return c.json({ state: r.state, token: r.token, fence: r.fence, ttlMs: r.ttlMs, expiresAt: r.expiresAt }, 201);
  return c.json({ state: r.state, response: r.response, completedAt: r.completedAt }, 200);
});

idempotencyRoutes.post("/:key/heartbeat", async (c) => {
  const key = lockName(c, "key");
  const body = await readBody(c, heartbeatBody);
  const r = await heartbeatIdempotency(serviceContext(c), key, body.token, body.ttlMs);
  return c.json({ expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence }, 200);
});

idempotencyRoutes.post("/:key/complete", async (c) => {
  const key = lockName(c, "key");
  const body = await readBody(c, idempotencyCompleteBody);
  const r = await completeIdempotency(serviceContext(c), key, body.token, body.response);
  return c.json({ state: "completed", completedAt: r.completedAt, fence: r.fence }, 200);
});

idempotencyRoutes.post("/:key/fail", async (c) => {
  const key = lockName(c, "key");
  const body = await readBody(c, idempotencyFailBody);
  await failIdempotency(serviceContext(c), key, body.token);
  return c.json({ state: "absent" }, 200);
});

idempotencyRoutes.get("/:key", async (c) => {
  const key = lockName(c, "key");
  return c.json(await inspectIdempotency(serviceContext(c), key), 200);
});
