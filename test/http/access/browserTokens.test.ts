// A browser page on another origin (Chromium, headless) using the service through the SDK with a scoped
// token (docs/API.md "Browsers: CORS and scoped tokens"), against the Worker served by workerd over TCP
// (Durable store: what is checked here is the same on both): it takes and releases a lock over a wait
// socket and over HTTP, and cannot list, read the audit log or touch a name outside its prefix (403); an
// expired token gets 401; a page on an origin CORS_ORIGINS does not list is refused by the browser as before.
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveBesideWrangler, startWorkerServer, type WorkerServer } from "../../../tools/serve-worker/serve.mjs";
import { signClaims } from "../../../src/wire/scopedToken";
import { launchBrowser, watchProblems } from "../../support/browser";
import { httpClient } from "../../support/http";
import { until } from "../../support/workerServers";

const KEY = "key-server-aaaa";
const SECRET = "tenant-a-token-secret-for-the-browser-test";
const PAGE_DIR = path.resolve(import.meta.dirname, "../../support/crossOriginPage");
const PREFIX = "page-";

const unique = (label: string) => `${PREFIX}${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let worker: WorkerServer;
let browser: Browser;
let listed: StaticSite;
let unlisted: StaticSite;

interface StaticSite {
  origin: string;
  close: () => Promise<void>;
}

/** The SDK as a page would ship it: src/client bundled for browsers, one ES module. */
async function bundleSdk(): Promise<string> {
  const esbuild: typeof import("esbuild") = await import(resolveBesideWrangler("esbuild"));
  const out = await esbuild.build({
    entryPoints: [path.resolve(import.meta.dirname, "../../../src/client/index.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
  });
  return out.outputFiles[0].text;
}

/** A tiny static server on its own port (so its own origin): the page, its script and the SDK. */
async function serveSite(sdk: string): Promise<StaticSite> {
  const files: Record<string, [string, string]> = {
    "/": [fs.readFileSync(path.join(PAGE_DIR, "index.html"), "utf8"), "text/html"],
    "/page.js": [fs.readFileSync(path.join(PAGE_DIR, "page.js"), "utf8"), "text/javascript"],
    "/sdk.js": [sdk, "text/javascript"],
  };
  const server = http.createServer((req, res) => {
    const file = files[new URL(req.url ?? "/", "http://x").pathname];
    res.writeHead(file ? 200 : 404, { "content-type": file?.[1] ?? "text/plain" }).end(file?.[0] ?? "not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

beforeAll(async () => {
  const sdk = await bundleSdk();
  [listed, unlisted] = await Promise.all([serveSite(sdk), serveSite(sdk)]);
  // Chromium may need installing (apt-get, as root) on a fresh machine: minutes, once.
  [worker, browser] = await Promise.all([
    startWorkerServer({
      vars: { API_KEYS: `tenant-a=${KEY}`, TOKEN_SECRETS: `tenant-a=${SECRET}`, CORS_ORIGINS: `tenant-a=${listed.origin}` },
    }),
    launchBrowser(),
  ]);
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await Promise.all([listed?.close(), unlisted?.close()]);
});

/** The page's server: mints a token for the page with its namespace key. */
async function mintToken(operations = ["acquire", "release", "heartbeat", "wait", "inspect"]): Promise<string> {
  const res = await httpClient(worker.url, KEY).post("/v1/tokens", { prefix: PREFIX, operations, ttlMs: 600_000 });
  expect(res.status).toBe(200);
  return res.body.token;
}

const inspect = async (name: string) => (await httpClient(worker.url, KEY).get(`/v1/locks/${name}`)).body;

async function openPage(site: StaticSite): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = await watchProblems(page);
  await page.goto(`${site.origin}/`);
  await page.locator("html[data-ready='1']").waitFor({ state: "attached", timeout: 10_000 });
  return { page, problems, close: () => context.close() };
}

/** Calls window.page.<fn>(...args) in the page (as text: the page's DOM types are not this project's). */
const call = <T>(page: Page, fn: string, ...args: unknown[]): Promise<T> =>
  page.evaluate(`window.page.${fn}(${args.map((a) => JSON.stringify(a)).join(", ")})`) as Promise<T>;

describe("a page on a listed origin, with a scoped token", () => {
  it("waits for a lock over a wait socket, holds it and releases it", async () => {
    const token = await mintToken();
    const name = unique("socket");
    const server = httpClient(worker.url, KEY);
    const held = await server.post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000, holder: "the-server" });
    const p = await openPage(listed);
    try {
      const taking = call<{ channel: string; fence: number }>(p.page, "take", worker.url, token, name, "socket");
      await until(
        () => inspect(name),
        (s) => s.waiters === 1,
      );
      expect((await server.post(`/v1/locks/${name}/release`, { token: held.body.token })).status).toBe(200);
      const taken = await taking;
      expect(taken.channel).toBe("socket");
      expect(await inspect(name)).toMatchObject({ held: true, holder: "browser-page", fence: taken.fence });
      expect(await call(p.page, "release", name)).toBe(true);
      await until(
        () => inspect(name),
        (s) => s.held === false,
      );
      expect(p.problems).toEqual([]);
    } finally {
      await p.close();
    }
  });

  it("takes and releases a lock over HTTP (preflighted requests)", async () => {
    const token = await mintToken();
    const name = unique("http");
    const p = await openPage(listed);
    try {
      const taken = await call<{ channel: string; fence: number }>(p.page, "take", worker.url, token, name, "http");
      expect(taken.channel).toBe("http");
      expect(await inspect(name)).toMatchObject({ held: true, holder: "browser-page", fence: taken.fence });
      expect(await call(p.page, "release", name)).toBe(true);
      expect((await inspect(name)).held).toBe(false);
      expect(p.problems).toEqual([]);
    } finally {
      await p.close();
    }
  });

  it("cannot list, read the audit log, or touch a name outside its prefix (403 forbidden)", async () => {
    const token = await mintToken();
    const outside = `other-${Date.now().toString(36)}`;
    const p = await openPage(listed);
    try {
      const forbidden = (reason: string) => ({ error: "ForbiddenError", code: "forbidden", status: 403, reason });
      expect(await call(p.page, "attempt", worker.url, token, "list", PREFIX)).toEqual(forbidden("operation"));
      expect(await call(p.page, "attempt", worker.url, token, "audit")).toEqual(forbidden("operation"));
      expect(await call(p.page, "attempt", worker.url, token, "lock", outside)).toEqual(forbidden("name"));
      expect(await call(p.page, "attempt", worker.url, token, "inspect", outside)).toEqual(forbidden("name"));
      expect(await call(p.page, "rawSocket", `${worker.url.replace(/^http/, "ws")}/v1/locks/${outside}/wait`, token)).toBe("refused");
      expect((await inspect(outside)).held).toBe(false);
      // Its own prefix, the same page and token: allowed.
      expect(await call(p.page, "attempt", worker.url, token, "lock", unique("in"))).toEqual({ took: true });
    } finally {
      await p.close();
    }
  });

  it("gets 401 (token_expired) with an expired token", async () => {
    const expired = await signClaims(SECRET, {
      namespace: "tenant-a",
      prefix: PREFIX,
      operations: ["acquire", "inspect"],
      expiresAt: Date.now() - 1000,
    });
    const name = unique("expired");
    const p = await openPage(listed);
    try {
      const unauthorized = { error: "UnauthorizedError", code: "unauthorized", status: 401, reason: "token_expired" };
      expect(await call(p.page, "attempt", worker.url, expired, "lock", name)).toEqual(unauthorized);
      expect(await call(p.page, "attempt", worker.url, expired, "inspect", name)).toEqual(unauthorized);
      expect((await inspect(name)).held).toBe(false);
    } finally {
      await p.close();
    }
  });
});

describe("a page on an origin CORS_ORIGINS does not list", () => {
  it("is refused by the browser as before: no answer over HTTP, no wait socket, nothing taken", async () => {
    const token = await mintToken();
    const name = unique("unlisted");
    const p = await openPage(unlisted);
    try {
      expect(await call(p.page, "rawFetch", `${worker.url}/v1/locks/${name}`, token)).toBe("failed: TypeError");
      // The SDK tells the refused origin from a dead network at once (the service answers a no-cors probe),
      // well before its 3 s deadline, and names the setting and the page's origin.
      const started = Date.now();
      const refused = (await call(p.page, "attempt", worker.url, token, "lock", name)) as { message: string };
      expect(Date.now() - started).toBeLessThan(2500);
      expect(refused).toMatchObject({ error: "UnreachableError", status: 0 });
      expect(refused.message).toContain(`the browser refused its answer to ${unlisted.origin}`);
      expect(refused.message).toMatch(/CORS_ORIGINS does not list/);
      expect(await call(p.page, "rawSocket", `${worker.url.replace(/^http/, "ws")}/v1/locks/${name}/wait`, token)).toBe("refused");
      expect((await inspect(name)).held).toBe(false);
      // The same page's origin listed, the same token and calls work (the listed page above): the origin is the difference.
      const ok = await openPage(listed);
      try {
        expect(await call(ok.page, "rawFetch", `${worker.url}/v1/locks/${name}`, token)).toBe(200);
      } finally {
        await ok.close();
      }
    } finally {
      await p.close();
    }
  });
});
