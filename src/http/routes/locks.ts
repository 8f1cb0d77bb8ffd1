import { Hono } from "hono";
import { Mutex } from "../../primitives/Mutex";
import { roomFor } from "../../room/roomClient";
import type { AppEnv } from "../appTypes";
import { lockName } from "../lockName";
import { requireWebhookSecret } from "../onExpire";
import { readBody } from "../readBody";
import { heartbeatBody, mutexAcquireBody, releaseBody } from "../schemas";

/** /v1/locks/{name}: the re-entrant mutex with fencing tokens. */
export const lockRoutes = new Hono<AppEnv>();

function mutexOf(c: { var: AppEnv["Variables"] }, name: string) {
  return new Mutex(c.var.store, name, { namespace: c.var.ns });
}

lockRoutes.post("/:name/acquire", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, mutexAcquireBody);
  if (body.onExpire) requireWebhookSecret(c.env);
  const room = roomFor(c.env, c.var.ns, "mutex", name);
  // Waiting happens in the lock's room (first-come, first-served, woken by
  // release or expiry). A try-lock (waitMs 0) and a re-entry go straight to
  // the store: like tryLock on a fair lock, a try-lock may barge.
  if (body.waitMs > 0 && body.token === undefined) {
    const grant = await room.waitForMutex({ ttlMs: body.ttlMs, waitMs: body.waitMs, onExpire: body.onExpire }, c.req.raw.signal);
    return c.json(grant, 200);
  }
  const grant = await mutexOf(c, name).acquire({ ttlMs: body.ttlMs, token: body.token, watch: Boolean(body.onExpire) });
  if (body.onExpire) await room.watch({ fence: grant.fence, expiresAt: grant.expiresAt, onExpire: body.onExpire });
  return c.json(grant, 200);
});

lockRoutes.post("/:name/heartbeat", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, heartbeatBody);
  const r = await mutexOf(c, name).heartbeat(body.token, body.ttlMs);
  // A watched lease's room keeps its alarm at the lease end; move it along.
  if (r.watched) await roomFor(c.env, c.var.ns, "mutex", name).leaseMoved(r.fence, r.expiresAt);
  return c.json({ expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence }, 200);
});

lockRoutes.post("/:name/release", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, releaseBody);
  const r = await mutexOf(c, name).release(body.token);
  // A watched lease has waiters or an expiry watch: the room hears of the
  // release before we answer, so the next waiter is woken at once.
  if (r.released && r.watched) await roomFor(c.env, c.var.ns, "mutex", name).released(r.fence);
  return c.json({ released: r.released, count: r.count }, 200);
});

lockRoutes.get("/:name", async (c) => {
  const name = lockName(c);
  const [state, waiters] = await Promise.all([mutexOf(c, name).inspect(), roomFor(c.env, c.var.ns, "mutex", name).waiterCount()]);
  return c.json({ name, ...state, waiters }, 200);
});
