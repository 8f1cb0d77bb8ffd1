import { Hono } from "hono";
import { selectStore } from "../store/storeConfig.js";
import type { AppEnv } from "./appTypes.js";
import { bearerKey, namespaceOf } from "./auth.js";
import { errorResponse } from "./errorResponse.js";
import { openApiDocument } from "./openapi.js";
import { clientRequestId, REQUEST_ID_HEADER } from "./requestId.js";
import { idempotencyRoutes } from "../kinds/idempotency/routes.js";
import { mutexRoutes } from "../kinds/mutex/routes.js";
import { rwlockRoutes } from "../kinds/rwlock/routes.js";
import { semaphoreRoutes } from "../kinds/semaphore/routes.js";

/** The Hono app: health and the OpenAPI document open, everything under /v1 behind a key. */
export const app = new Hono<AppEnv>();

app.onError((err, c) => errorResponse(c, err));
app.notFound((c) => c.json({ error: "not_found", message: `no route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));

app.get("/healthz", async (c) => {
  const store = selectStore(c.env);
  const started = Date.now();
  try {
    await store.ping();
    return c.json({ status: "ok", store: store.kind, answers: true, latencyMs: Date.now() - started }, 200);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return c.json(
      { error: "store_unavailable", message, status: "unavailable", store: store.kind, answers: false, latencyMs: Date.now() - started },
      503,
    );
  }
});

app.get("/openapi.json", (c) => c.json(openApiDocument(new URL(c.req.url).origin)));

app.use("/v1/*", async (c, next) => {
  const authorization = c.req.header("authorization");
  c.set("ns", await namespaceOf(authorization, c.env.API_KEYS));
  c.set("apiKey", bearerKey(authorization) ?? "");
  c.set("requestId", clientRequestId(c.req.header(REQUEST_ID_HEADER)));
  c.set("store", selectStore(c.env));
  await next();
});

app.route("/v1/locks", mutexRoutes);
app.route("/v1/idempotency", idempotencyRoutes);
app.route("/v1/rwlocks", rwlockRoutes);
app.route("/v1/semaphores", semaphoreRoutes);
