import { afterEach, describe, expect, it, vi } from "vitest";
import { openApiDocument } from "../../../src/http/openapi/openapi";
import { kinds as kindApis } from "../../../src/worker/kinds";
import { api } from "../../support/workers/api";

describe("service documents", () => {
  const { get } = api("durable");

  it("serves the OpenAPI document for every route of the contract, without a key", async () => {
    const res = await get("/openapi.json", { key: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.servers).toEqual([{ url: "http://holdfast.test", description: "this deployment" }]);
    const routes = Object.entries(res.body.paths as Record<string, object>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(routes).toEqual(
      expect.arrayContaining([
        "GET /healthz",
        "POST /v1/locks/{name}/acquire",
        "POST /v1/locks/{name}/heartbeat",
        "POST /v1/locks/{name}/release",
        "GET /v1/locks/{name}",
        "GET /v1/locks/{name}/wait",
        "POST /v1/idempotency/{key}/begin",
        "POST /v1/idempotency/{key}/heartbeat",
        "POST /v1/idempotency/{key}/complete",
        "POST /v1/idempotency/{key}/fail",
        "GET /v1/idempotency/{key}",
        "GET /v1/idempotency/{key}/wait",
        "GET /v1/rwlocks/{name}/read/wait",
        "GET /v1/rwlocks/{name}/write/wait",
        "POST /v1/rwlocks/{name}/read/acquire",
        "POST /v1/rwlocks/{name}/write/acquire",
        "POST /v1/rwlocks/{name}/read/heartbeat",
        "POST /v1/rwlocks/{name}/write/heartbeat",
        "POST /v1/rwlocks/{name}/heartbeat",
        "POST /v1/rwlocks/{name}/read/release",
        "POST /v1/rwlocks/{name}/write/release",
        "POST /v1/rwlocks/{name}/release",
        "GET /v1/rwlocks/{name}",
        "POST /v1/semaphores/{name}/acquire",
        "POST /v1/semaphores/{name}/heartbeat",
        "POST /v1/semaphores/{name}/release",
        "GET /v1/semaphores/{name}",
        "GET /v1/semaphores/{name}/wait",
        "GET /v1/notifications/key",
      ]),
    );
  });

  it("serves the document the schemas give now, from the static assets (never a stale copy)", async () => {
    const res = await get("/openapi.json", { key: null });
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toEqual(openApiDocument("http://holdfast.test", kindApis));
  });

  it("documents the acquire body from the same schema the route enforces", async () => {
    const doc = (await get("/openapi.json", { key: null })).body;
    expect(doc.paths["/v1/locks/{name}/acquire"].post.requestBody.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/MutexAcquireRequest",
    });
    const schema = doc.components.schemas.MutexAcquireRequest;
    expect(schema.required).toEqual(["ttlMs"]);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.ttlMs).toMatchObject({ minimum: 100, maximum: 86_400_000 });
    expect(schema.properties.waitMs).toMatchObject({ minimum: 0, maximum: 60_000 });
  });

  it("documents the semaphore's limit and permits bounds from the schema the route enforces", async () => {
    const doc = (await get("/openapi.json", { key: null })).body;
    const schema = doc.components.schemas.SemaphoreAcquireRequest;
    expect(schema.required).toEqual(expect.arrayContaining(["limit", "ttlMs"]));
    expect(schema.properties.limit).toMatchObject({ minimum: 1, maximum: 10_000 });
    expect(schema.properties.permits).toMatchObject({ minimum: 1, default: 1 });
  });

  it("healthz says which store answers", async () => {
    expect((await get("/healthz", { key: null })).body).toMatchObject({ status: "ok", store: "durable", answers: true });
    expect((await api("redis").get("/healthz", { key: null })).body).toMatchObject({ status: "ok", store: "redis", answers: true });
  });

  it("unknown routes are a JSON 404", async () => {
    const res = await get("/v1/nope");
    expect(res.status).toBe(404);
    expect(res.body.error).toBe("not_found");
  });
});

// The deployed Worker's word on its settings (src/http/settings/): a setting it ignores or cannot use is
// said in its first log line and in /healthz, by variable and entry, never by value.
describe("settings the Worker ignores or cannot use", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const BAD = {
    CORS_ORIGINS: "tenant-a=http://localhost:5173/",
    TOKEN_SECRETS: "tenant-a=a-secret-of-24-characters",
  };

  it("/healthz names each setting the Worker ignores or cannot use, never its value, and stays ok when the store answers", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {}); // the settings line, shown in the next case
    const res = await api("redis", BAD).get("/healthz", { key: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ok", store: "redis", answers: true });
    expect(res.body.settingProblems).toEqual([
      {
        variable: "TOKEN_SECRETS",
        message: expect.stringMatching(/^TOKEN_SECRETS entry 1 of 1 is not namespace=secret with a secret of 32\+ characters; /),
      },
      { variable: "CORS_ORIGINS", message: expect.stringMatching(/^CORS_ORIGINS entry 1 of 1 .* ends with a slash, .*; CORS_ORIGINS is ignored/) },
    ]);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain("localhost:5173");
    expect(text).not.toContain("a-secret-of-24");
  });

  it("/healthz has no settingProblems when every setting is usable", async () => {
    const res = await api("redis").get("/healthz", { key: null });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty("settingProblems");
  });

  it("the first request with such settings logs one line naming them all, before anything else; later ones log nothing more", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const { get } = api("durable", { ...BAD, STORE_TIMEOUT_MS: "2s", RATE_LIMIT_TIERS: "*=off,batch=fast" });
    await get("/");
    await get("/");
    expect(logged.mock.calls).toEqual([
      [
        expect.stringMatching(
          /^holdfast settings: TOKEN_SECRETS entry 1 of 1 .* \| CORS_ORIGINS entry 1 of 1 .* \| RATE_LIMIT_TIERS entry 2 of 2 .* \| STORE_TIMEOUT_MS is not a whole number above 0; the default 2000 ms is used$/,
        ),
      ],
    ]);
    expect(String(logged.mock.calls[0][0])).not.toContain("a-secret-of-24");
  });
});
