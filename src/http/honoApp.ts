import type { Hono } from "hono";
import { HonoBase } from "hono/hono-base";
import { RegExpRouter } from "hono/router/reg-exp-router";
import type { AppEnv } from "./appTypes.js";

/**
 * A Hono app (or a group of routes) routed by RegExpRouter alone: one
 * regular expression for every route, matched once per request. `new Hono()`
 * would try it and silently fall back to the slower TrieRouter on a route
 * pattern it refuses (a `{...}` that matches the empty string, or a pattern
 * beside a literal segment at the same place); here such a route throws
 * when it is added, so the app cannot be built with it. It also keeps the
 * routers Hono's default brings out of the Worker's bundle.
 */
export function honoApp(): Hono<AppEnv> {
  return new HonoBase<AppEnv>({ router: new RegExpRouter() });
}
