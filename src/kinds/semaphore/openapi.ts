import {
  heartbeatOp,
  LOCK_SOCKET_MESSAGES,
  waitSocketOp,
  type Operations,
  READ_ERRORS,
  releaseRequest,
  WRITE_ERRORS,
} from "../../http/openapi/openapiOps.js";
import { semaphoreAcquireBody, semaphoreGrant, semaphoreReleaseResponse, semaphoreStateResponse } from "./schemas.js";

/** The semaphore's operations in the OpenAPI document, by path under its mount point (/v1/semaphores). */
export const semaphoreOperations: Operations = {
  "/{name}/acquire": {
    post: {
      operationId: "semaphoreAcquire",
      summary: "Take permits of a counting semaphore",
      body: ["SemaphoreAcquireRequest", semaphoreAcquireBody],
      ok: [200, "SemaphoreGrant", semaphoreGrant],
      errors: WRITE_ERRORS,
    },
  },
  "/{name}/wait": { get: waitSocketOp("semaphoreWait", "Wait for semaphore permits over a WebSocket", LOCK_SOCKET_MESSAGES) },
  "/{name}/heartbeat": { post: heartbeatOp("semaphoreHeartbeat", "Extend a semaphore holder's lease") },
  "/{name}/release": {
    post: {
      operationId: "semaphoreRelease",
      summary: "Give a holder's permits back",
      body: releaseRequest,
      ok: [200, "SemaphoreReleaseResponse", semaphoreReleaseResponse],
      errors: WRITE_ERRORS,
    },
  },
  "/{name}": {
    get: {
      operationId: "semaphoreInspect",
      summary: "Inspect a semaphore",
      ok: [200, "SemaphoreState", semaphoreStateResponse],
      errors: READ_ERRORS,
    },
  },
};
