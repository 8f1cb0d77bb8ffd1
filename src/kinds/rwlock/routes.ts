import { Hono } from "hono";
import type { AppEnv } from "../../http/appTypes.js";
import { jsonWithDeliveryConfirmed } from "../../http/deliveryConfirmed.js";
import { lockName } from "../../http/lockName.js";
import { readBody } from "../../http/readBody.js";
import { serviceContext } from "../../http/serviceContextOf.js";
import { openWaitSocket } from "../../http/waitSocket.js";
import { heartbeatBody, releaseBody } from "../../wire/schemas.js";
import { rwAcquireBody } from "./schemas.js";
import { acquireRw, heartbeatRw, inspectRw, releaseRw } from "./service.js";
import type { RwMode } from "./types.js";

/**
 * /v1/rwlocks/{name}: the read-write lock. `read/...` and `write/...` name
 * the mode; heartbeat and release also work without it (the token says
 * which holder). Validation here, everything else in ./service.
 */
export const rwLockRoutes = new Hono<AppEnv>();

const modeOf = (m: string): RwMode => (m === "write" ? "write" : "read");

rwLockRoutes.post("/:name/:mode{read|write}/acquire", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, rwAcquireBody);
  const { grant, delivery } = await acquireRw(serviceContext(c), name, modeOf(c.req.param("mode")), body, c.req.raw.signal);
  return delivery ? jsonWithDeliveryConfirmed(c, grant, delivery) : c.json(grant, 200);
});

// A wait over a WebSocket (docs/API.md): the socket goes to the lock object.
rwLockRoutes.get("/:name/:mode{read|write}/wait", (c) => openWaitSocket(c, "rwlock", modeOf(c.req.param("mode"))));

for (const path of ["/:name/:mode{read|write}/heartbeat", "/:name/heartbeat"]) {
  rwLockRoutes.post(path, async (c) => {
    const name = lockName(c);
    const body = await readBody(c, heartbeatBody);
    return c.json(await heartbeatRw(serviceContext(c), name, body.token, body.ttlMs), 200);
  });
}

for (const path of ["/:name/:mode{read|write}/release", "/:name/release"]) {
  rwLockRoutes.post(path, async (c) => {
    const name = lockName(c);
    const body = await readBody(c, releaseBody);
    const mode = c.req.param("mode");
    return c.json(await releaseRw(serviceContext(c), name, body.token, mode ? modeOf(mode) : "any"), 200);
  });
}

rwLockRoutes.get("/:name", async (c) => {
  const name = lockName(c);
  return c.json({ name, ...(await inspectRw(serviceContext(c), name)) }, 200);
});
