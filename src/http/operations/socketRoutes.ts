import type { Hono } from "hono";
import { honoApp } from "../honoApp.js";
import type { AppEnv } from "../appTypes.js";
import { inspectOperation, type KindApi } from "../kindApi.js";
import { type Operations, SOCKET_ERRORS } from "../openapi/openapiOps.js";
import { isWaitSocket } from "./operation.js";
import { openWaitSocket, openWatchSocket } from "../waitSocket.js";

/** The path parameter of a kind's name: an idempotency key is a key. */
const paramOf = (api: KindApi) => api.http.nameParam;

/**
 * Every kind's sockets, alike (docs/API.md): GET /v1/<kind path>/<name>/wait
 * ("Waiting over a WebSocket": the socket goes to the lock object, which
 * speaks the wait protocol), and GET .../watch ("Watching a lock": the lock's
 * state pushed as its GET answers it, whenever it changes, without a place in
 * line).
 */
export function socketRoutes(apis: readonly KindApi[]): Hono<AppEnv> {
  const routes = honoApp();
  for (const api of apis) {
    const base = `${api.http.path.replace(/^\/v1/, "")}/:${paramOf(api)}`;
    for (const op of api.http.operations) {
      if (isWaitSocket(op)) routes.get(`${base}/${op.step}`, (c) => openWaitSocket(c, api.name, paramOf(api), op.at, op.withoutSocket));
    }
    routes.get(`${base}/watch`, (c) => openWatchSocket(c, api.name, paramOf(api), api.http.watchPosition !== undefined));
  }
  return routes;
}

/** The watch sockets in the OpenAPI document, by full path. */
export function watchOperations(apis: readonly KindApi[]): Operations {
  const ops: Operations = {};
  for (const api of apis) {
    // The state it pushes is what the kind's GET of one answers.
    const state = inspectOperation(api)?.ok[0]?.[1];
    const since = api.http.watchPosition;
    ops[`${api.http.path}/{${paramOf(api)}}/watch`] = {
      get: {
        operationId: `${api.name}Watch`,
        summary: `Watch ${api.http.oneInSummaries}'s state over a WebSocket`,
        socket:
          'Switching Protocols: a watch socket (subprotocol holdfast.v1). The client sends {"type":"watch"}; the service answers ' +
          `{"type":"state","state":...} at once and again whenever the state changes (the state as GET answers it${state ? `: ${state}` : ""}), ` +
          'or {"type":"error",...} and closes. It takes no place in line. ' +
          (since
            ? 'Opened with since=N, each state message also carries "changes" (the changes after the last position it was sent, the first ' +
              'time those after N, oldest first) and "missed": true where the history no longer held the next one (then the newest alone). '
            : "") +
          'The messages are specified in docs/API.md, "Watching a lock".',
        ...(since ? { query: [{ name: "since", description: since, schema: { type: "integer", minimum: 0 } }] } : {}),
        errors: SOCKET_ERRORS,
      },
    };
  }
  return ops;
}
