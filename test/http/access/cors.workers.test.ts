// CORS per namespace (docs/API.md "Browsers: CORS and scoped tokens"): preflights from listed origins answered
// before any key; answers readable by a listed origin's page only when the key's namespace lists it; wait
// sockets from a browser refused unless its origin is listed (or the service's own), server sockets as before.
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import worker from "../../../src/worker";
import { api, KEY_A, KEY_B, uniqueName } from "../../support/workers/api";

const SHOP = "https://app.shop.example";
const LOCAL = "http://localhost:5173";
const B_ONLY = "https://b.example";
const CORS_ORIGINS = `tenant-a=${SHOP},tenant-a=${LOCAL},tenant-b=${B_ONLY}`;
const server = api("durable", { CORS_ORIGINS });

const preflight = (origin: string, env = server.env) =>
  worker.fetch(
    new Request("http://holdfast.test/v1/locks/x/acquire", {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type, holdfast-request-id",
      },
    }),
    env,
    createExecutionContext(),
  );

function socket(origin: string | undefined, key = KEY_A) {
  const headers: Record<string, string> = { upgrade: "websocket", authorization: `Bearer ${key}` };
  if (origin) headers.origin = origin;
  return worker.fetch(new Request(`http://holdfast.test/v1/locks/${uniqueName("cors")}/wait`, { headers }), server.env, createExecutionContext());
}

function corsHeaders(headers: Headers): string[] {
  const names: string[] = [];
  headers.forEach((_, name) => {
    if (name.startsWith("access-control")) names.push(name);
  });
  return names;
}

async function closed(res: Response): Promise<number> {
  res.webSocket?.accept();
  res.webSocket?.close(1000, "done");
  return res.status;
}

describe("preflight", () => {
  it("is answered before any key for a listed origin, with what the SDK sends", async () => {
    for (const origin of [SHOP, LOCAL, B_ONLY]) {
      const res = await preflight(origin);
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
      expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST");
      expect(res.headers.get("access-control-allow-headers")).toBe("Authorization, Content-Type, Holdfast-Request-Id");
      expect(res.headers.get("access-control-max-age")).toBe("7200");
      expect(res.headers.get("vary")).toBe("Origin");
    }
  });

  it("is refused as before (401, no CORS headers) for any other origin, and without CORS_ORIGINS", async () => {
    for (const res of [await preflight("https://evil.example"), await preflight(`${SHOP}.evil.example`), await preflight(SHOP, api("durable").env)]) {
      expect(res.status).toBe(401);
      expect(corsHeaders(res.headers)).toEqual([]);
    }
  });

  it("ignores a malformed CORS_ORIGINS whole, its settings line naming the entry by position, refusing browsers as without it", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const res = await preflight(SHOP, api("durable", { CORS_ORIGINS: `tenant-a=${SHOP},tenant-a=${SHOP}/path` }).env);
      expect(res.status).toBe(401);
      expect(logged).toHaveBeenCalledWith(
        "holdfast settings: CORS_ORIGINS entry 2 of 2 is not namespace=scheme://host[:port]: it has more than scheme://host[:port] " +
          "(a path, a query, a default port or upper case), which no browser sends; CORS_ORIGINS is ignored, so every browser origin is refused",
      );
    } finally {
      logged.mockRestore();
    }
  });
});

describe("answers", () => {
  it("carry Allow-Origin, Vary and the exposed headers when the key's namespace lists the origin", async () => {
    const res = await server.get(`/v1/locks/${uniqueName("cors")}`, { headers: { origin: SHOP } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(SHOP);
    expect(res.headers.get("access-control-expose-headers")).toBe("Retry-After");
    expect(res.headers.get("vary")).toMatch(/Origin/);
  });

  it("carry none for an origin another namespace lists, an unlisted origin, or no origin", async () => {
    const cases = [
      await server.get(`/v1/locks/${uniqueName("cors")}`, { headers: { origin: B_ONLY } }), // tenant-a's key, tenant-b's origin
      await server.get(`/v1/locks/${uniqueName("cors")}`, { key: KEY_B, headers: { origin: SHOP } }),
      await server.get(`/v1/locks/${uniqueName("cors")}`, { headers: { origin: "https://evil.example" } }),
      await server.get(`/v1/locks/${uniqueName("cors")}`),
    ];
    for (const res of cases) {
      expect(res.status).toBe(200);
      expect(corsHeaders(res.headers)).toEqual([]);
    }
  });

  it("let a listed origin's page read a refusal that came before any key was known (401)", async () => {
    const res = await server.get(`/v1/locks/${uniqueName("cors")}`, { key: "not-a-key-at-all", headers: { origin: SHOP } });
    expect(res.status).toBe(401);
    expect(res.headers.get("access-control-allow-origin")).toBe(SHOP);
  });
});

describe("wait sockets", () => {
  it("open from a browser on an origin the key's namespace lists, or the service's own, and for servers (no Origin)", async () => {
    expect(await closed(await socket(SHOP))).toBe(101);
    expect(await closed(await socket("http://holdfast.test"))).toBe(101);
    expect(await closed(await socket(undefined))).toBe(101);
  });

  it("are refused 403 (reason origin) from an unlisted origin or one only another namespace lists", async () => {
    for (const [origin, key] of [
      ["https://evil.example", KEY_A],
      [B_ONLY, KEY_A],
      [SHOP, KEY_B],
    ]) {
      const res = await socket(origin, key);
      expect([origin, res.status, ((await res.json()) as { reason: string }).reason]).toEqual([origin, 403, "origin"]);
    }
  });
});
