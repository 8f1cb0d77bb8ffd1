// The app routes with Hono's RegExpRouter alone (src/http/honoApp.ts): one regular expression for every
// route. A route pattern RegExpRouter refuses (`{.*}`, or `:mode{read|write}` beside a literal segment)
// would make a default Hono fall back to the slower TrieRouter; here it must not build at all, and every
// route must be reached through the router with the parameters TrieRouter would give it.
import { TrieRouter } from "hono/router/trie-router";
import { describe, expect, it } from "vitest";
import { allowedMethodsOf } from "../../src/http/allowedMethods";
import { createApp } from "../../src/http/app";
import { openApiDocument } from "../../src/http/openapi/openapi";
import { kinds as kindApis } from "../../src/worker/kinds";
import { selectStore } from "../../src/worker/stores";

const app = createApp({ apis: kindApis, selectStore, openApiDocument: (origin) => openApiDocument(origin, kindApis) });
const routes = app.routes.filter((r) => r.method !== "ALL");

/** A request path for a route: each parameter a sample value ("{a|b}" the first choice). */
function samplePath(path: string): string {
  return path.replace(/:(\w+)(?:\{([^}]+)\})?/g, (_, name: string, pattern?: string) =>
    pattern && /^\w+(\|\w+)*$/.test(pattern) ? pattern.split("|")[0] : `sample-${name}`,
  );
}

type Match = ReturnType<typeof app.router.match>;

/** What a router's answer names: the route paths of the matched handlers, in order, with their parameters. */
function named([handlers, stash]: Match): Array<{ path: string; params: Record<string, string> }> {
  return handlers.map(([[, route], params]) => {
    const values: Record<string, string> = {};
    for (const [k, v] of Object.entries(params)) values[k] = stash ? (stash[v as unknown as number] as string) : (v as string);
    return { path: route.path, params: values };
  });
}

describe("the app's router", () => {
  it("is RegExpRouter, and stays so once it has matched a request", async () => {
    // An env as every request has one (an empty one: no settings to look at).
    await app.request("/healthz/nothing-here", {}, {});
    expect(app.router.name).toBe("RegExpRouter");
  });

  it("reaches every route with its own parameters, as TrieRouter would", () => {
    const trie = new TrieRouter<Match[0][number][0]>();
    for (const r of app.routes) trie.add(r.method, r.path, [r.handler, r]);
    const paths = new Set(routes.map((r) => samplePath(r.path)));
    // Edges: the console's three forms, a path below /v1 with no route, a mode that is not one, trailing slashes.
    for (const p of ["/console", "/console/", "/console/a/b.js", "/v1", "/v1/", "/v1/rwlocks/n/other/acquire", "/v1/locks/n/acquire/", "/"])
      paths.add(p);
    expect(routes.length).toBeGreaterThan(40);
    for (const method of ["GET", "POST", "PUT", "DELETE"]) {
      for (const path of paths) {
        const got = named(app.router.match(method, path));
        expect(got, `${method} ${path}`).toEqual(named(trie.match(method, path) as Match));
      }
    }
    for (const r of routes) {
      const got = named(app.router.match(r.method, samplePath(r.path)));
      expect(
        got.map((m) => m.path),
        `${r.method} ${r.path}`,
      ).toContain(r.path);
    }
  });

  it("leaves 405 and 404 as they were before the routes were rewritten for it", () => {
    const allowed = allowedMethodsOf(app);
    expect(allowed("/v1/rwlocks/n/write/acquire")).toEqual(["POST"]);
    expect(allowed("/v1/rwlocks/n/read/wait")).toEqual(["GET", "HEAD"]);
    expect(allowed("/v1/rwlocks/n/release")).toEqual(["POST"]);
    expect(allowed("/v1/rwlocks/n/other/acquire")).toEqual([]);
    // The console: "/console" answers 405 to another method, its files (once "/console/:file{.*}") 404.
    expect(allowed("/console")).toEqual(["GET", "HEAD"]);
    for (const p of ["/console/", "/console/app.js", "/console/a/b"]) expect(allowed(p), p).toEqual([]);
  });
});
