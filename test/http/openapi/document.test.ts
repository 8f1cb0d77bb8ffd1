import { validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/http/app";
import { kinds as kindApis } from "../../../src/worker/kinds";
import { selectStore } from "../../../src/worker/stores";
import { openApiDocument } from "../../../src/http/openapi/openapi";

// The app as src/worker.ts builds it (the Worker module itself needs workerd for its Durable Objects).
const app = createApp({ apis: kindApis, selectStore, openApiDocument: (origin) => openApiDocument(origin, kindApis) });

/** The routes the Hono app serves, as OpenAPI paths ("/:name/:mode{read|write}/acquire" -> one path per mode). */
function servedRoutes(): string[] {
  const out = new Set<string>();
  for (const r of app.routes) {
    if (r.method === "ALL") continue; // middleware
    if (r.path === "/console" || r.path.startsWith("/console/")) continue; // the console's pages, not the API
    let paths = [r.path];
    for (;;) {
      const next = paths.flatMap((p) => {
        const m = p.match(/:(\w+)\{([^}]+)\}/);
        return m ? m[2].split("|").map((choice) => p.replace(m[0], choice)) : [p];
      });
      if (next.length === paths.length && next.every((p, i) => p === paths[i])) break;
      paths = next;
    }
    for (const p of paths) out.add(`${r.method} ${p.replace(/:(\w+)/g, "{$1}")}`);
  }
  return [...out].sort();
}

describe("the OpenAPI document", () => {
  const doc = openApiDocument("https://holdfast.example", kindApis);

  it("is valid OpenAPI 3.1 by a real validator, every $ref resolving", async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it("covers exactly the routes the app serves", () => {
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(servedRoutes());
  });

  it("names every operation once, and shares its error answers and schemas as components", () => {
    const ops = Object.values(doc.paths).flatMap((byMethod) => Object.values(byMethod)) as Array<{
      operationId: string;
      responses: Record<string, unknown>;
    }>;
    const ids = ops.map((op) => op.operationId);
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of ops.filter((o) => o.operationId !== "health" && o.operationId !== "openApiDocument" && o.operationId !== "root")) {
      expect(op.responses["500"]).toEqual({ $ref: "#/components/responses/Internal" });
    }
    expect(doc.servers).toEqual([{ url: "https://holdfast.example", description: "this deployment" }]);
    expect(doc.info.license.identifier).toBe("MIT");
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["MutexGrant", "RwGrant", "SemaphoreGrant", "JsonValue", "Error"]));
  });

  it("documents request bodies as clients send them: defaulted fields optional, unknown fields refused", () => {
    const acquire = doc.components.schemas.SemaphoreAcquireRequest as {
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, object>;
    };
    expect(acquire.required.sort()).toEqual(["limit", "ttlMs"]);
    expect(acquire.additionalProperties).toBe(false);
    expect(acquire.properties.permits).toMatchObject({ minimum: 1, default: 1 });
  });
});
