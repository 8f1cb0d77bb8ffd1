import type { Context } from "hono";
import type { ServiceRequest } from "../service/ServiceContext.js";
import type { AppEnv } from "./appTypes.js";

/**
 * What the service layer is handed of one request, read off the Hono context: data only, so the
 * HTTP layer enters the service layer once, with the operation's call, which makes the request's
 * context itself (service/requestContext.ts).
 */
export function serviceRequestOf(c: Context<AppEnv>): ServiceRequest {
  let waitUntil: (p: Promise<unknown>) => void;
  try {
    const ctx = c.executionCtx;
    waitUntil = (p) => ctx.waitUntil(p);
  } catch {
    waitUntil = (p) => void p; // no execution context: the follow-up still runs
  }
  // c.get, not c.var: Hono builds a new object of every variable on each read of c.var.
  return {
    env: c.env,
    ns: c.get("ns"),
    store: c.get("store"),
    kinds: c.get("kinds"),
    clientId: c.get("requestId"),
    apiKey: c.get("apiKey"),
    waitUntil,
  };
}
