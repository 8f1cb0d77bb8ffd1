import { Hono } from "hono";
import { LeaseLostError } from "../../errors";
import { Mutex } from "../../primitives/Mutex";
import type { AppEnv } from "../appTypes";
import { lockName } from "../lockName";
import { readBody } from "../readBody";
import { heartbeatBody, mutexAcquireBody, releaseBody } from "../schemas";
import { roomFor } from "../../room/roomClient";

/** /v1/locks/{name}: the re-entrant mutex with fencing tokens. */
export const lockRoutes = new Hono<AppEnv>();

function mutexOf(c: { var: AppEnv["Variables"] }, name: string) {
  return new Mutex(c.var.store, name, { namespace: c.var.ns });
}

lockRoutes.post("/:name/acquire", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, mutexAcquireBody);
  const room = roomFor(c.env, c.var.ns, "mutex", name);
  const grant = await room.acquireMutex(c.var.store, body);
  return c.json(grant, 200);
});

lockRoutes.post("/:name/heartbeat", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, heartbeatBody);
  const r = await c.var.store.mutexHeartbeat({ ns: c.var.ns, name }, body);
  if (r.status === "lost") throw new LeaseLostError();
  if (r.watched) c.executionCtx.waitUntil(roomFor(c.env, c.var.ns, "mutex", name).leaseMoved(r.fence, r.expiresAt));
  return c.json({ expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence }, 200);
});

lockRoutes.post("/:name/release", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, releaseBody);
  const r = await mutexOf(c, name).release(body.token);
  // A watched lease has waiters or an expiry watch: its room must hear of
  // the release before we answer, so the next waiter is woken at once.
  if (r.released && r.watched) await roomFor(c.env, c.var.ns, "mutex", name).released(r.fence);
  return c.json({ released: r.released, count: r.count }, 200);
});

lockRoutes.get("/:name", async (c) => {
  const name = lockName(c);
  const [state, waiters] = await Promise.all([
    mutexOf(c, name).inspect(),
    roomFor(c.env, c.var.ns, "mutex", name).waiterCount(),
  ]);
  return c.json({ name, ...state, waiters }, 200);
});
