import type { Hono } from "hono";
import type { AppEnv } from "../appTypes.js";
import { jsonWithDeliveryConfirmed } from "../deliveryConfirmed.js";
import { honoApp } from "../honoApp.js";
import type { KindApi } from "../kindApi.js";
import { lockName } from "../lockName.js";
import { isWaitSocket } from "./operation.js";
import { readBody } from "../readBody.js";
import { serviceRequestOf } from "../serviceRequestOf.js";

/** An operation's route under its kind's mount point: `/:name`, then its step. */
const routeOf = (param: string, step: string) => `/:${param}${step ? `/${step}` : ""}`;

/**
 * A kind's routes, one per operation of its list, in its order: the name
 * checked against the contract's pattern, the body against the operation's
 * schema, then its call; a grant from the line is confirmed once its answer
 * went out whole (deliveryConfirmed.ts).
 */
export function operationRoutes(api: KindApi): Hono<AppEnv> {
  const routes = honoApp();
  const { nameParam: param } = api.http;
  for (const op of api.http.operations) {
    if (isWaitSocket(op)) continue; // socketRoutes.ts: every kind's sockets, alike
    routes[op.method](routeOf(param, op.step), async (c) => {
      const name = lockName(c, param);
      const body = op.body ? await readBody(c, op.body[1]) : undefined;
      const answer = await op.run(serviceRequestOf(c), name, body, c.req.raw.signal, c.req.query());
      return answer.delivery ? jsonWithDeliveryConfirmed(c, answer.body, answer.delivery) : c.json(answer.body, answer.status ?? 200);
    });
  }
  return routes;
}
