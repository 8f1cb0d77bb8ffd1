import * as z from "zod/mini";
import { REQUEST_ID_HEADER, REQUEST_ID_PATTERN } from "../requestId.js";
import type { KindApi } from "../kindApi.js";
import { notificationKeyResponse } from "../notificationKey.js";
import { operatorOperations } from "./operatorOpenapi.js";
import { watchOperations } from "../operations/socketRoutes.js";
import { tokenOperations } from "../access/tokenRoutes.js";
import { type Named, type Op, type Operations, SOCKET_ERRORS } from "./openapiOps.js";
import { isWaitSocket, type Operation, type WaitSocketOperation } from "../operations/operation.js";
import * as shared from "../../wire/schemas.js";

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the routes
 * validate with, so the two cannot drift apart. Every schema is a named
 * component (requests as their input, with defaults optional; answers as
 * their output), every operation has an operationId, and the error answers
 * are shared responses.
 */

/** The error answers: status -> component name and description. */
const ERROR_RESPONSES: Record<number, [string, string]> = {
  400: ["BadRequest", "Bad input: `error` names the field (invalid_ttl, invalid_name, invalid_body, ...). Nothing was changed."],
  401: ["Unauthorized", "No or unknown API key, or a scoped token that expired (reason token_expired) or is not this service's (bad_token)."],
  403: [
    "Forbidden",
    "forbidden: `reason` says why: role (a force release needs an admin key), operation or name (outside a scoped token's scope), origin (a wait socket from an origin CORS_ORIGINS does not list for the key's namespace).",
  ],
  409: ["Conflict", "locked (with retryAfterMs and Retry-After), lease_lost, in_progress, limit_mismatch, upgrade_not_supported or not_held."],
  413: ["TooLarge", "The body is over 64 KiB."],
  426: ["UpgradeRequired", "upgrade_required: a wait or watch socket's path was asked for without Upgrade: websocket."],
  422: ["FingerprintMismatch", "The key was used with another fingerprint."],
  429: [
    "RateLimited",
    "rate_limited: retry after Retry-After (retryAfterMs). `limit` says which was met: budget (the namespace's requests), waiters_per_lock (MAX_WAITERS_PER_LOCK), sockets_per_namespace (MAX_SOCKETS_PER_NAMESPACE), socket_messages (a wait socket's message rate; sent on the socket) or socket_flood (a wait socket's handshake from a key or address that flooded one lately: refused for 1 s, doubling with each flood up to 60 s) or socket_rate (a wait or watch socket's handshake past its key's or address's rate of new sockets: SOCKET_OPEN_BURST at once, then SOCKET_OPENS_PER_SECOND).",
  ],
  500: ["Internal", "A bug, never an outage: errorId is also in the Worker's log."],
  501: ["NotSupported", "not_supported: the service runs on a quorum of Redis databases, which offers fewer lock kinds (the message says which)."],
  503: ["Unavailable", "The store did not answer within its deadline; outcome says whether a write may have been applied."],
};

/** A kind's operation as the document describes it. */
function documented(op: Operation | WaitSocketOperation): Op {
  if (isWaitSocket(op)) {
    return {
      operationId: op.operationId,
      summary: op.summary,
      socket: `Switching Protocols: a wait socket (subprotocol holdfast.v1). ${op.messages} The messages are specified in docs/API.md, "Waiting over a WebSocket".`,
      errors: SOCKET_ERRORS,
    };
  }
  const [ok, ...alsoOk] = op.ok;
  return {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.body && { body: op.body }),
    ...(op.query && { query: op.query }),
    ok,
    ...(alsoOk.length > 0 && { alsoOk }),
    errors: [...op.errors],
  };
}

/** Every operation the app serves, with the kinds' and the operators'; the paths a quorum does not offer. */
function operationsOf(apis: readonly KindApi[]): { operations: Operations; notOnQuorum: Set<string> } {
  const operations: Operations = {};
  const notOnQuorum = new Set<string>();
  for (const api of apis) {
    for (const op of api.http.operations) {
      const path = `${api.http.path}/{${api.http.nameParam}}${op.step ? `/${op.step}` : ""}`;
      operations[path] = { ...operations[path], [op.method ?? "get"]: documented(op) };
      if (!api.http.offeredOnQuorum) notOnQuorum.add(path);
    }
  }
  operations["/v1/notifications/key"] = {
    get: {
      operationId: "notificationKey",
      summary: "The key that verifies this namespace's expiry notifications",
      ok: [200, "NotificationKey", notificationKeyResponse],
      errors: [401, 403, 429, 503],
    },
  };
  Object.assign(operations, operatorOperations(apis), tokenOperations);
  Object.assign(operations, watchOperations(apis));
  return { operations, notOnQuorum };
}

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (schema: object) => ({ "application/json": { schema } });

/** Component schemas of one direction: requests as their input, answers as their output. */
function componentSchemas(named: Named[], io: "input" | "output"): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  registry.add(shared.jsonValue, { id: "JsonValue" });
  for (const [id, schema] of named) if (!registry.has(schema)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${id}` });
  // Inside an OpenAPI document a component needs neither its own dialect nor its own id.
  return Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _d, $id: _i, ...schema }]) => [id, schema]));
}

/** The document, with this deployment's origin as its server. */
export function openApiDocument(origin: string, apis: readonly KindApi[]) {
  const { operations, notOnQuorum } = operationsOf(apis);
  const ops = Object.values(operations).flatMap((byMethod) => Object.values(byMethod));
  const requests = ops.flatMap((op) => (op.body ? [op.body] : []));
  const answers: Named[] = [
    ["Health", shared.healthResponse],
    ["Error", shared.errorResponse],
    ...ops.flatMap((op) => [...(op.ok ? [op.ok] : []), ...(op.alsoOk ?? [])].map(([, id, schema]): Named => [id, schema])),
  ];

  const paths: Record<string, Record<string, unknown>> = {
    "/": {
      get: {
        operationId: "root",
        summary: "Where to go: the console, this document, the health check",
        security: [],
        responses: { "200": { description: "This deployment's console, OpenAPI document and health check URLs", content: json({ type: "object" }) } },
      },
    },
    "/healthz": {
      get: {
        operationId: "health",
        summary: "Which store answers",
        security: [],
        responses: {
          "200": { description: "The store answers", content: json(ref("Health")) },
          "503": { description: "The store does not answer", content: json(ref("Error")) },
        },
      },
    },
    "/openapi.json": {
      get: {
        operationId: "openApiDocument",
        summary: "This document",
        security: [],
        responses: { "200": { description: "The OpenAPI 3.1 document", content: json({ type: "object" }) } },
      },
    },
  };
  for (const [path, byMethod] of Object.entries(operations)) {
    const param = path.includes("{key}") ? "Key" : path.includes("{name}") ? "Name" : undefined;
    paths[path] = Object.fromEntries(
      Object.entries(byMethod).map(([method, op]) => [
        method,
        {
          operationId: op.operationId,
          summary: op.summary,
          parameters: [
            ...(param ? [{ $ref: `#/components/parameters/${param}` }] : []),
            ...(method === "post" ? [{ $ref: "#/components/parameters/RequestId" }] : []),
            ...(op.query ?? []).map((q) => ({ ...q, in: "query", required: false })),
          ],
          ...(op.body && { requestBody: { required: true, content: json(ref(op.body[0])) } }),
          responses: {
            ...(op.socket ? { "101": { description: op.socket } } : {}),
            ...Object.fromEntries(
              [...(op.ok ? [op.ok] : []), ...(op.alsoOk ?? [])].map(([status, id]) => [
                String(status),
                { description: "ok", content: json(ref(id)) },
              ]),
            ),
            ...Object.fromEntries(
              [...op.errors, ...(notOnQuorum.has(path) ? [501] : []), 500].map((status) => [
                String(status),
                { $ref: `#/components/responses/${ERROR_RESPONSES[status][0]}` },
              ]),
            ),
          },
        },
      ]),
    );
  }

  const nameSchema = z.toJSONSchema(shared.nameSchema);
  delete (nameSchema as { $schema?: string }).$schema;
  return {
    openapi: "3.1.0",
    info: {
      title: "holdfast",
      version: "1",
      description: "Distributed locks for edge and serverless apps, and keys for work done once. The contract: docs/API.md.",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: origin, description: "this deployment" }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "An API key from API_KEYS (each belongs to one namespace), or a scoped token (POST /v1/tokens) where its scope allows.",
        },
      },
      parameters: {
        Name: { name: "name", in: "path", required: true, description: "The lock's name", schema: nameSchema },
        Key: { name: "key", in: "path", required: true, description: "The key", schema: nameSchema },
        RequestId: {
          name: REQUEST_ID_HEADER,
          in: "header",
          required: false,
          description:
            "A new value per write, the same on every retry of it: the write then applies once (a retried acquire gets its first grant, a retried release its first answer). Remembered 2 minutes.",
          schema: { type: "string", pattern: REQUEST_ID_PATTERN.source },
        },
      },
      schemas: { ...componentSchemas(answers, "output"), ...componentSchemas(requests, "input") },
      responses: Object.fromEntries(Object.values(ERROR_RESPONSES).map(([id, description]) => [id, { description, content: json(ref("Error")) }])),
    },
  };
}
