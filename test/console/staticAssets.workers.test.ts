import { expect, it } from "vitest";
import { api } from "../support/workers/api";

/**
 * The console's files through the platform's own static-assets handling
 * (Miniflare's assets worker, configured from wrangler.toml [assets]), which
 * bare workerd (npm start, test/console/browser.test.ts) only imitates with a
 * disk service: the same pages, headers and refusals either way.
 */
it("serves the console's pages through the ASSETS binding as configured for deploys", async () => {
  const { call, env } = api("durable");
  expect(env.ASSETS).toBeDefined();
  for (const [path, type] of [
    ["/console", /^text\/html/],
    ["/console/", /^text\/html/],
    ["/console/console.js", /^text\/javascript/],
    // The lock panel's watch socket client (the console follows one lock over it).
    ["/console/watch.js", /^text\/javascript/],
    ["/console/console.css", /^text\/css/],
  ] as const) {
    const res = await call("GET", path, undefined, { key: null });
    expect([path, res.status, res.headers.get("content-type")]).toEqual([path, 200, expect.stringMatching(type)]);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  }
  expect((await call("GET", "/console/nope.js", undefined, { key: null })).status).toBe(404);
  expect((await call("GET", "/index.html", undefined, { key: null })).status).toBe(404);
});
