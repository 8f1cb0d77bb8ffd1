import { honoApp } from "../../http/honoApp.js";
import { jsonWithDeliveryConfirmed } from "../../http/deliveryConfirmed.js";
import { lockName } from "../../http/lockName.js";
import { readBody } from "../../http/readBody.js";
import { serviceContext } from "../../http/serviceContextOf.js";
import { heartbeatBody, releaseBody } from "../../wire/schemas.js";
import { rwAcquireBody } from "./schemas.js";
import { acquireRw, heartbeatRw, inspectRw, releaseRw } from "./service.js";
import type { RwMode } from "./types.js";

/**
 * /v1/rwlocks/{name}: the read-write lock. `read/...` and `write/...` name
 * the mode; heartbeat and release also work without it (the token says
 * which holder). Validation here, everything else in ./service.
 */
export const rwLockRoutes = honoApp();

// Each mode is its own literal path, not one `:mode{read|write}` pattern: a pattern beside the literal
// `/:name/heartbeat` (or the watch route's `/:name/watch`) is a route Hono's RegExpRouter refuses, and the
// app would fall back to its slower TrieRouter (test/http/router.test.ts).
for (const mode of ["read", "write"] as const satisfies readonly RwMode[]) {
  rwLockRoutes.post(`/:name/${mode}/acquire`, async (c) => {
    const name = lockName(c);
    const body = await readBody(c, rwAcquireBody);
    const { grant, delivery } = await acquireRw(serviceContext(c), name, mode, body, c.req.raw.signal);
    return delivery ? jsonWithDeliveryConfirmed(c, grant, delivery) : c.json(grant, 200);
  });
}

// The token says which holder: the mode in the path changes nothing here.
for (const path of ["/:name/read/heartbeat", "/:name/write/heartbeat", "/:name/heartbeat"]) {
  rwLockRoutes.post(path, async (c) => {
    const name = lockName(c);
    const body = await readBody(c, heartbeatBody);
    return c.json(await heartbeatRw(serviceContext(c), name, body.token, body.ttlMs), 200);
  });
}

for (const [path, mode] of [
  ["/:name/read/release", "read"],
  ["/:name/write/release", "write"],
  ["/:name/release", "any"],
] as const) {
  rwLockRoutes.post(path, async (c) => {
    const name = lockName(c);
    const body = await readBody(c, releaseBody);
    return c.json(await releaseRw(serviceContext(c), name, body.token, mode), 200);
  });
}

rwLockRoutes.get("/:name", async (c) => {
  const name = lockName(c);
  return c.json({ name, ...(await inspectRw(serviceContext(c), name)) }, 200);
});
