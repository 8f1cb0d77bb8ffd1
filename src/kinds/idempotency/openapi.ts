import { heartbeatOp, type Operations, READ_ERRORS, WRITE_ERRORS, waitSocketOp } from "../../http/openapi/openapiOps.js";
import {
  idempotencyBeginBody,
  idempotencyCompleteBody,
  idempotencyCompleted,
  idempotencyFailBody,
  idempotencyFailed,
  idempotencyReplay,
  idempotencyStarted,
  idempotencyStateResponse,
} from "./schemas.js";

/** Idempotency keys' operations in the OpenAPI document, by path under their mount point (/v1/idempotency). */
export const idempotencyOperations: Operations = {
  "/{key}/begin": {
    post: {
      operationId: "idempotencyBegin",
      summary: "Begin work on an idempotency key, or get its stored response",
      body: ["IdempotencyBeginRequest", idempotencyBeginBody],
      ok: [201, "IdempotencyStarted", idempotencyStarted],
      alsoOk: [[200, "IdempotencyReplay", idempotencyReplay]],
      errors: [400, 401, 403, 409, 413, 422, 429, 503],
    },
  },
  "/{key}/wait": {
    get: waitSocketOp(
      "idempotencyWait",
      "Wait over a WebSocket for another caller's run of a key to end",
      'The client sends {"type":"watch","waitMs":n}; the service answers {"type":"completed","response":...,"completedAt":n,"fence":n}, {"type":"free"} (begin it), {"type":"timeout","retryAfterMs":n} or {"type":"error",...}.',
    ),
  },
  "/{key}/heartbeat": { post: heartbeatOp("idempotencyHeartbeat", "Move the in-progress deadline") },
  "/{key}/complete": {
    post: {
      operationId: "idempotencyComplete",
      summary: "Store the response; kept retainMs",
      body: ["IdempotencyCompleteRequest", idempotencyCompleteBody],
      ok: [200, "IdempotencyCompleted", idempotencyCompleted],
      errors: WRITE_ERRORS,
    },
  },
  "/{key}/fail": {
    post: {
      operationId: "idempotencyFail",
      summary: "Give the work up; the key can be begun again",
      body: ["IdempotencyFailRequest", idempotencyFailBody],
      ok: [200, "IdempotencyFailed", idempotencyFailed],
      errors: WRITE_ERRORS,
    },
  },
  "/{key}": {
    get: {
      operationId: "idempotencyInspect",
      summary: "Inspect an idempotency key",
      ok: [200, "IdempotencyState", idempotencyStateResponse],
      errors: READ_ERRORS,
    },
  },
};
