import { honoApp } from "../../http/honoApp.js";
import { jsonWithDeliveryConfirmed } from "../../http/deliveryConfirmed.js";
import { lockName } from "../../http/lockName.js";
import { readBody } from "../../http/readBody.js";
import { serviceContext } from "../../http/serviceContextOf.js";
import { heartbeatBody, releaseBody } from "../../wire/schemas.js";
import { semaphoreAcquireBody } from "./schemas.js";
import { acquireSemaphore, heartbeatSemaphore, inspectSemaphore, releaseSemaphore } from "./service.js";

/** /v1/semaphores/{name}: the counting semaphore. Validation here, everything else in ./service. */
export const semaphoreRoutes = honoApp();

semaphoreRoutes.post("/:name/acquire", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, semaphoreAcquireBody);
  const { grant, delivery } = await acquireSemaphore(serviceContext(c), name, body, c.req.raw.signal);
  return delivery ? jsonWithDeliveryConfirmed(c, grant, delivery) : c.json(grant, 200);
});

semaphoreRoutes.post("/:name/heartbeat", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, heartbeatBody);
  return c.json(await heartbeatSemaphore(serviceContext(c), name, body.token, body.ttlMs), 200);
});

semaphoreRoutes.post("/:name/release", async (c) => {
  const name = lockName(c);
  const body = await readBody(c, releaseBody);
  return c.json(await releaseSemaphore(serviceContext(c), name, body.token), 200);
});

semaphoreRoutes.get("/:name", async (c) => {
  const name = lockName(c);
  return c.json({ name, ...(await inspectSemaphore(serviceContext(c), name)) }, 200);
});
