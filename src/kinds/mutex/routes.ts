import { honoApp } from "../../http/honoApp.js";
import { jsonWithDeliveryConfirmed } from "../../http/deliveryConfirmed.js";
import { lockName } from "../../http/lockName.js";
import { readBody } from "../../http/readBody.js";
import { serviceContext } from "../../http/serviceContextOf.js";
import { heartbeatBody, releaseBody } from "../../wire/schemas.js";
import { mutexAcquireBody } from "./schemas.js";
import { acquireMutex, heartbeatMutex, inspectMutex, releaseMutex } from "./service.js";

/** /v1/locks/{name}: the re-entrant mutex with fencing tokens. Validation here, everything else in ./service. */
export const mutexRoutes = honoApp();

mutexRoutes.post("/:name/acquire", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, mutexAcquireBody);
  const { grant, delivery } = await acquireMutex(serviceContext(c), name, body, c.req.raw.signal);
  // A grant from the line is confirmed once its answer went out (see deliveryConfirmed).
  return delivery ? jsonWithDeliveryConfirmed(c, grant, delivery) : c.json(grant, 200);
});

mutexRoutes.post("/:name/heartbeat", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, heartbeatBody);
  return c.json(await heartbeatMutex(serviceContext(c), name, body.token, body.ttlMs), 200);
});

mutexRoutes.post("/:name/release", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, releaseBody);
  return c.json(await releaseMutex(serviceContext(c), name, body.token), 200);
});

mutexRoutes.get("/:name", async (c) => {
  const name = lockName(c);
  return c.json({ name, ...(await inspectMutex(serviceContext(c), name)) }, 200);
});
