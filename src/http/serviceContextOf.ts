import type { Context } from "hono";
import type { ServiceContext } from "../service/ServiceContext.js";
import { serviceContextOf } from "../service/requestContext.js";
import type { AppEnv } from "./appTypes.js";

/** The service layer's view of one request: what it reads of the Hono context, handed over in one call. */
export function serviceContext(c: Context<AppEnv>): ServiceContext {
  let waitUntil: (p: Promise<unknown>) => void;
  try {
    const ctx = c.executionCtx;
    waitUntil = (p) => ctx.waitUntil(p);
  } catch {
    waitUntil = (p) => void p; // no execution context: the follow-up still runs
  }
  // c.get, not c.var: Hono builds a new object of every variable on each read of c.var.
  return serviceContextOf({
    env: c.env,
    ns: c.get("ns"),
    store: c.get("store"),
    kinds: c.get("kinds"),
    clientId: c.get("requestId"),
    apiKey: c.get("apiKey"),
    waitUntil,
  });
}
