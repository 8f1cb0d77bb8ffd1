import { z } from "zod";
import * as idem from "../kinds/idempotency/schemas";
import * as mutex from "../kinds/mutex/schemas";
import * as shared from "./schemas";

const s = { ...shared, ...mutex, ...idem };

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas the routes
 * validate with, so the two cannot drift apart.
 */
type Op = {
  summary: string;
  body?: z.ZodType;
  ok: [number, z.ZodType];
  /** Further success statuses (begin: 201 started, 200 completed). */
  alsoOk?: Array<[number, z.ZodType]>;
  errors: number[];
};

const nameParam = { name: "name", in: "path", required: true, schema: z.toJSONSchema(s.nameSchema) };

const operations: Record<string, Record<string, Op>> = {
  "/v1/locks/{name}/acquire": {
    post: { summary: "Acquire or re-enter a mutex", body: s.mutexAcquireBody, ok: [200, s.mutexGrant], errors: [400, 401, 409, 413, 503] },
  },
  "/v1/locks/{name}/heartbeat": {
    post: { summary: "Extend a mutex lease", body: s.heartbeatBody, ok: [200, s.heartbeatResponse], errors: [400, 401, 409, 413, 503] },
  },
  "/v1/locks/{name}/release": {
    post: { summary: "Release one level of a mutex hold", body: s.releaseBody, ok: [200, s.releaseResponse], errors: [400, 401, 409, 413, 503] },
  },
  "/v1/locks/{name}": {
    get: { summary: "Inspect a mutex", ok: [200, s.mutexStateResponse], errors: [400, 401, 503] },
  },
  "/v1/idempotency/{key}/begin": {
    post: {
      summary: "Begin work on an idempotency key, or get its stored response",
      body: s.idempotencyBeginBody,
      ok: [201, s.idempotencyStarted],
      alsoOk: [[200, s.idempotencyReplay]],
      errors: [400, 401, 409, 413, 422, 503],
    },
  },
  "/v1/idempotency/{key}/heartbeat": {
    post: { summary: "Move the in-progress deadline", body: s.heartbeatBody, ok: [200, s.heartbeatResponse], errors: [400, 401, 409, 413, 503] },
  },
  "/v1/idempotency/{key}/complete": {
    post: {
      summary: "Store the response; kept retainMs",
      body: s.idempotencyCompleteBody,
      ok: [200, s.idempotencyCompleted],
      errors: [400, 401, 409, 413, 503],
    },
  },
  "/v1/idempotency/{key}/fail": {
    post: { summary: "Give the work up; the key can be begun again", body: s.idempotencyFailBody, ok: [200, s.idempotencyFailed], errors: [400, 401, 409, 413, 503] },
  },
  "/v1/idempotency/{key}": {
    get: { summary: "Inspect an idempotency key", ok: [200, s.idempotencyStateResponse], errors: [400, 401, 503] },
  },
};

export function openApiDocument() {
  const paths: Record<string, unknown> = {
    "/healthz": {
      get: {
        summary: "Which store answers",
        security: [],
        responses: {
          "200": { description: "ok", content: { "application/json": { schema: z.toJSONSchema(s.healthResponse) } } },
          "503": { description: "store_unavailable", content: { "application/json": { schema: z.toJSONSchema(s.errorResponse) } } },
        },
      },
    },
  };
  for (const [path, ops] of Object.entries(operations)) {
    paths[path] = Object.fromEntries(
      Object.entries(ops).map(([method, op]) => [
        method,
        {
          summary: op.summary,
          parameters: path.includes("{name}") ? [nameParam] : path.includes("{key}") ? [{ ...nameParam, name: "key" }] : [],
          ...(op.body && {
            requestBody: { required: true, content: { "application/json": { schema: z.toJSONSchema(op.body, { io: "input" }) } } },
          }),
          responses: {
            ...Object.fromEntries(
              [op.ok, ...(op.alsoOk ?? [])].map(([status, schema]) => [
                String(status),
                { description: "ok", content: { "application/json": { schema: z.toJSONSchema(schema) } } },
              ]),
            ),
            ...Object.fromEntries(
              // Every operation may answer 500 internal (a bug, with an errorId that is also logged).
              [...op.errors, 500].map((status) => [
                String(status),
                { description: "error", content: { "application/json": { schema: z.toJSONSchema(s.errorResponse) } } },
              ]),
            ),
          },
        },
      ]),
    );
  }
  return {
    openapi: "3.1.0",
    info: { title: "holdfast", version: "1", description: "Distributed locks for edge and serverless apps. See docs/API.md." },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}
