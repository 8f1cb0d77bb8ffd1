import { z } from "zod";
import * as idem from "../kinds/idempotency/schemas";
import * as mutex from "../kinds/mutex/schemas";
import * as rw from "../kinds/rwlock/schemas";
import * as sem from "../kinds/semaphore/schemas";
import * as shared from "./schemas";

const s = { ...shared, ...mutex, ...idem, ...rw, ...sem };

/** The read-write lock's routes: per mode, and heartbeat/release also without one (the token says which holder). */
function rwlockOperations(): Record<string, Record<string, Op>> {
  const ops: Record<string, Record<string, Op>> = {};
  for (const mode of ["read", "write"] as const) {
    ops[`/v1/rwlocks/{name}/${mode}/acquire`] = {
      post: { summary: `Acquire or re-enter a ${mode} lock`, body: s.rwAcquireBody, ok: [200, s.rwGrant], errors: [400, 401, 409, 413, 503] },
    };
    ops[`/v1/rwlocks/{name}/${mode}/heartbeat`] = {
      post: { summary: "Extend a read-write lock holder's lease", body: s.heartbeatBody, ok: [200, s.heartbeatResponse], errors: [400, 401, 409, 413, 503] },
    };
    ops[`/v1/rwlocks/{name}/${mode}/release`] = {
      post: { summary: `Release one ${mode} hold`, body: s.releaseBody, ok: [200, s.rwReleaseResponse], errors: [400, 401, 409, 413, 503] },
    };
  }
  ops["/v1/rwlocks/{name}/heartbeat"] = {
    post: { summary: "Extend a read-write lock holder's lease", body: s.heartbeatBody, ok: [200, s.heartbeatResponse], errors: [400, 401, 409, 413, 503] },
  };
  ops["/v1/rwlocks/{name}/release"] = {
    post: { summary: "Release the token's write hold, or else one read hold", body: s.releaseBody, ok: [200, s.rwReleaseResponse], errors: [400, 401, 409, 413, 503] },
  };
  ops["/v1/rwlocks/{name}"] = { get: { summary: "Inspect a read-write lock", ok: [200, s.rwStateResponse], errors: [400, 401, 503] } };
  return ops;
}

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
  ...rwlockOperations(),
  "/v1/semaphores/{name}/acquire": {
    post: { summary: "Take permits of a counting semaphore", body: s.semaphoreAcquireBody, ok: [200, s.semaphoreGrant], errors: [400, 401, 409, 413, 503] },
  },
  "/v1/semaphores/{name}/heartbeat": {
    post: { summary: "Extend a semaphore holder's lease", body: s.heartbeatBody, ok: [200, s.heartbeatResponse], errors: [400, 401, 409, 413, 503] },
  },
  "/v1/semaphores/{name}/release": {
    post: { summary: "Give a holder's permits back", body: s.releaseBody, ok: [200, s.semaphoreReleaseResponse], errors: [400, 401, 409, 413, 503] },
  },
  "/v1/semaphores/{name}": {
    get: { summary: "Inspect a semaphore", ok: [200, s.semaphoreStateResponse], errors: [400, 401, 503] },
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
