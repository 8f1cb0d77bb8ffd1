import type { Hono } from "hono";
import { honoApp } from "./honoApp.js";
import { NotConfiguredError } from "../errors.js";
import type { LockStore } from "../store/types.js";
import { allowedMethodsOf } from "./allowedMethods.js";
import type { AppEnv } from "./appTypes.js";
import { type HttpKinds, isSocketHandshake } from "./kindApi.js";
import { apiKeysProblem, bearerKey, callerOf } from "./access/auth.js";
import { consoleRoutes } from "./operator/console.js";
import { checkSocketOrigin, cors } from "./access/cors.js";
import { errorResponse } from "./errorResponse.js";
import { recordMetrics } from "./metrics.js";
import { notificationKeyRoutes } from "./notificationKey.js";
import { operatorRoutes } from "./operator/operatorRoutes.js";
import { operationRoutes } from "./operations/operationRoutes.js";
import { socketRoutes } from "./operations/socketRoutes.js";
import { checkRateLimit } from "../admission/rateLimit.js";
import { clientRequestId, REQUEST_ID_HEADER } from "./requestId.js";
import { callerOfScopedToken, checkTokenScope, isScopedToken } from "./access/scopedTokens.js";
import { tokenRoutes } from "./access/tokenRoutes.js";
import { keyFromProtocols } from "../wire/socketProtocol.js";
import { logSettingsOnce } from "./settings/settingsLog.js";
import { settingsProblems } from "./settings/settingsProblems.js";

/**
 * The Hono app: health and the OpenAPI document open, everything under /v1
 * behind a key. It is handed the kinds (HttpKinds: their APIs, the store
 * choice) by the Worker's entry point, src/worker.ts; it names none.
 */
export function createApp(kinds: HttpKinds): Hono<AppEnv> {
  const app = honoApp();
  // An isolate hands its every request the same env object (settingsLog.ts relies on it too), so its store is
  // picked once; a store it cannot build (NotConfiguredError) is kept for no one and asked again.
  const stores = new WeakMap<AppEnv["Bindings"], LockStore>();
  const storeOf = (env: AppEnv["Bindings"]): LockStore => {
    let store = stores.get(env);
    if (!store) {
      store = kinds.selectStore(env);
      stores.set(env, store);
    }
    return store;
  };

  app.use(logSettingsOnce);
  app.onError((err, c) => errorResponse(c, err));
  const allowedMethods = allowedMethodsOf(app);
  app.notFound((c) => {
    const pathname = new URL(c.req.url).pathname;
    const allowed = allowedMethods(pathname);
    if (allowed.length) {
      c.header("Allow", allowed.join(", "));
      return c.json({ error: "method_not_allowed", message: `${pathname} answers ${allowed.join(", ")}, not ${c.req.method}` }, 405);
    }
    return c.json({ error: "not_found", message: `no route for ${c.req.method} ${pathname}` }, 404);
  });

  app.get("/healthz", async (c) => {
    // Settings the Worker ignores or cannot use, by name and entry (never a value): said whatever the status.
    const problems = await settingsProblems(c.env);
    const settings = problems.length ? { settingProblems: problems } : {};
    let store: LockStore;
    try {
      store = storeOf(c.env);
    } catch (err) {
      if (!(err instanceof NotConfiguredError)) throw err;
      return c.json(
        { error: "not_configured", message: err.message, status: "not_configured", store: "redis", answers: false, latencyMs: 0, ...settings },
        503,
      );
    }
    const started = Date.now();
    let answers = true;
    let storeProblem = "";
    try {
      await store.ping();
    } catch (err) {
      answers = false;
      storeProblem = err instanceof Error ? err.message : String(err);
    }
    const health = { store: store.kind, answers, latencyMs: Date.now() - started, ...settings };
    // A service that refuses every /v1 call is not healthy, whatever its store says.
    const notConfigured = await apiKeysProblem(c.env.API_KEYS);
    if (notConfigured) return c.json({ error: "not_configured", message: notConfigured, status: "not_configured", ...health }, 503);
    if (!answers) {
      // The failure's text stays in the log: /healthz answers anyone, without a key.
      console.warn(`health: the store does not answer: ${storeProblem}`);
      return c.json({ error: "store_unavailable", message: "the store does not answer", status: "unavailable", ...health }, 503);
    }
    return c.json({ status: "ok", ...health }, 200);
  });

  // The root answers where to go, so the URL `npm start` or a deploy prints shows something useful in a browser.
  app.get("/", (c) => {
    const origin = new URL(c.req.url).origin;
    return c.json(
      {
        service: "holdfast",
        console: `${origin}/console`,
        openapi: `${origin}/openapi.json`,
        health: `${origin}/healthz`,
        docs: "https://github.com/holdfast-dev/holdfast#readme",
        api: `${origin}/v1/ (Authorization: Bearer <API key>)`,
      },
      200,
    );
  });
  app.get("/openapi.json", async (c) => c.json(await kinds.openApiDocument(new URL(c.req.url).origin, c.env.ASSETS)));
  app.route("/", consoleRoutes);

  // Before the key: a browser's preflight carries none (cors.ts).
  app.use("/v1/*", cors);
  app.use("/v1/*", recordMetrics(kinds.apis));

  app.use("/v1/*", async (c, next) => {
    // A browser's wait socket cannot send headers: its key comes as a subprotocol (socketProtocol.ts),
    // honoured only there: on a WebSocket upgrade of a wait route, never on a plain request.
    const socket = isSocketHandshake(c.req.raw, kinds.apis);
    const socketKey = socket ? keyFromProtocols(c.req.header("sec-websocket-protocol")) : undefined;
    const authorization = c.req.header("authorization") ?? (socketKey === undefined ? undefined : `Bearer ${socketKey}`);
    const bearer = bearerKey(authorization);
    // A scoped token (scopedTokens.ts) is told apart by its prefix alone: a namespace key's path stays as it was.
    const caller = isScopedToken(bearer) ? await callerOfScopedToken(bearer, c.env.TOKEN_SECRETS) : await callerOf(authorization, c.env.API_KEYS);
    c.set("caller", caller);
    c.set("ns", caller.namespace);
    await checkRateLimit(c.env, caller.namespace);
    if (caller.scope) checkTokenScope(c.req.method, c.req.url, caller.scope, kinds.apis);
    if (socket) checkSocketOrigin(c.req.raw, c.env.CORS_ORIGINS, caller.namespace);
    c.set("apiKey", bearer ?? "");
    c.set("requestId", clientRequestId(c.req.header(REQUEST_ID_HEADER)));
    c.set("store", storeOf(c.env));
    c.set("kinds", kinds.apis);
    await next();
  });

  for (const api of kinds.apis) app.route(api.http.path, operationRoutes(api));
  app.route("/v1/notifications", notificationKeyRoutes);
  app.route("/v1", socketRoutes(kinds.apis));
  app.route("/v1/tokens", tokenRoutes);
  app.route("/v1", operatorRoutes(kinds.apis));

  return app;
}
