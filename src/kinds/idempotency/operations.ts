import { heartbeatOperation, inspectOperation, leaseEndOperation } from "../../http/operations/leaseOperations.js";
import { operation, waitSocket } from "../../http/operations/operation.js";
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
import { beginIdempotency, completeIdempotency, failIdempotency, inspectIdempotency } from "./service.js";
import { IDEMPOTENCY } from "./types.js";

/**
 * /v1/idempotency/{key}: webhook deduplication and run-once jobs, one value
 * per operation (docs/API.md "Idempotency keys"). A begin is the key's
 * acquire, its complete and fail are its release.
 */
const idempotency = { key: IDEMPOTENCY, names: "Idempotency" };
export const idempotencyOperations = [
  operation({
    method: "post",
    step: "begin",
    operationId: "idempotencyBegin",
    summary: "Begin work on an idempotency key, or get its stored response",
    needs: ["acquire"],
    body: ["IdempotencyBeginRequest", idempotencyBeginBody],
    ok: [
      [201, "IdempotencyStarted", idempotencyStarted],
      [200, "IdempotencyReplay", idempotencyReplay],
    ],
    errors: [400, 401, 403, 409, 413, 422, 429, 503],
    run: async (request, key, body) => {
      const r = await beginIdempotency(request, key, body);
      if (r.state === "started") return { status: 201, body: r };
      const { fence: _fence, ...replay } = r; // a replay's answer carries no fence
      return { body: replay };
    },
  }),
  waitSocket({
    step: "wait",
    operationId: "idempotencyWait",
    summary: "Wait over a WebSocket for another caller's run of a key to end",
    messages:
      'The client sends {"type":"watch","waitMs":n}; the service answers {"type":"completed","response":...,"completedAt":n,"fence":n}, {"type":"free"} (begin it), {"type":"timeout","retryAfterMs":n} or {"type":"error",...}.',
    // It only watches another caller's run: a token that may wait may open it.
    needs: ["wait"],
    // A key has no acquire to wait in: its state is read until the run ends.
    withoutSocket: "read the key with GET /v1/idempotency/{key} until it is completed, or free to begin",
  }),
  heartbeatOperation(idempotency, "Move the in-progress deadline"),
  leaseEndOperation(idempotency, {
    step: "complete",
    summary: "Store the response; kept retainMs",
    body: ["IdempotencyCompleteRequest", idempotencyCompleteBody],
    ok: ["IdempotencyCompleted", idempotencyCompleted],
    run: (request, key, body) => completeIdempotency(request, key, body.token, body.response),
  }),
  leaseEndOperation(idempotency, {
    step: "fail",
    summary: "Give the work up; the key can be begun again",
    body: ["IdempotencyFailRequest", idempotencyFailBody],
    ok: ["IdempotencyFailed", idempotencyFailed],
    run: (request, key, body) => failIdempotency(request, key, body.token),
  }),
  inspectOperation(idempotency, "Inspect an idempotency key", idempotencyStateResponse, inspectIdempotency),
];
