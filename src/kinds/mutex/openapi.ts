import {
  heartbeatOp,
  LOCK_SOCKET_MESSAGES,
  type Operations,
  READ_ERRORS,
  releaseRequest,
  WRITE_ERRORS,
  waitSocketOp,
} from "../../http/openapi/openapiOps.js";
import { mutexAcquireBody, mutexGrant, mutexStateResponse, releaseResponse } from "./schemas.js";

/** The mutex's operations in the OpenAPI document, by path under its mount point (/v1/locks). */
export const mutexOperations: Operations = {
  "/{name}/acquire": {
    post: {
      operationId: "mutexAcquire",
      summary: "Acquire or re-enter a mutex",
      body: ["MutexAcquireRequest", mutexAcquireBody],
      ok: [200, "MutexGrant", mutexGrant],
      errors: WRITE_ERRORS,
    },
  },
  "/{name}/wait": { get: waitSocketOp("mutexWait", "Wait for a mutex over a WebSocket", LOCK_SOCKET_MESSAGES) },
  "/{name}/heartbeat": { post: heartbeatOp("mutexHeartbeat", "Extend a mutex lease") },
  "/{name}/release": {
    post: {
      operationId: "mutexRelease",
      summary: "Release one level of a mutex hold",
      body: releaseRequest,
      ok: [200, "MutexReleaseResponse", releaseResponse],
      errors: WRITE_ERRORS,
    },
  },
  "/{name}": {
    get: { operationId: "mutexInspect", summary: "Inspect a mutex", ok: [200, "MutexState", mutexStateResponse], errors: READ_ERRORS },
  },
};
