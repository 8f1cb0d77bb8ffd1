import type { Hono } from "hono";
import { honoApp } from "../honoApp.js";
import type { KindApi } from "../kindApi.js";
import { forceRelease } from "../../operator/forceRelease.js";
import { listLocks } from "../../operator/listing.js";
import {
  AUDIT_DEFAULT_LIMIT,
  AUDIT_MAX_LIMIT,
  cursorParam,
  LIST_DEFAULT_LIMIT,
  LIST_MAX_LIMIT,
  limitParam,
  prefixParam,
} from "../../operator/schemas.js";
import { operatorOps } from "../../store/types.js";
import type { AppEnv } from "../appTypes.js";
import { lockName } from "../lockName.js";
import { readBody } from "../readBody.js";
import { serviceRequestOf } from "../serviceRequestOf.js";

/**
 * What operators use (docs/API.md "Operators"): who am I, every kind's
 * listing and force release, and the audit log. Mounted on /v1, behind the
 * key like every /v1 route.
 */
export function operatorRoutes(apis: readonly KindApi[]): Hono<AppEnv> {
  const routes = honoApp();

  routes.get("/whoami", (c) => c.json(c.var.caller, 200));

  routes.get("/audit", async (c) => {
    const limit = limitParam(c.req.query("limit"), AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT);
    const cursor = cursorParam(c.req.query("cursor"));
    return c.json(await operatorOps(c.var.store).audit(c.var.ns, { limit, cursor }), 200);
  });

  for (const api of apis) {
    const mount = api.http.path.slice("/v1".length);
    routes.get(mount, async (c) => {
      const limit = limitParam(c.req.query("limit"), LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT);
      const prefix = prefixParam(c.req.query("prefix"));
      const cursor = cursorParam(c.req.query("cursor"));
      return c.json(await listLocks(serviceRequestOf(c), api, { prefix, limit, cursor }), 200);
    });
    const forceBody = api.http.forceReleaseBody?.[1];
    if (!api.service.forceRelease || !forceBody) continue;
    routes.post(`${mount}/:name/force-release`, async (c) => {
      const name = lockName(c);
      const body = await readBody(c, forceBody);
      return c.json(await forceRelease(serviceRequestOf(c), c.var.caller, api, name, body), 200);
    });
  }
  return routes;
}
