import {
  heartbeatOp,
  LOCK_SOCKET_MESSAGES,
  waitSocketOp,
  type Operations,
  READ_ERRORS,
  releaseRequest,
  WRITE_ERRORS,
} from "../../http/openapi/openapiOps.js";
import { rwAcquireBody, rwGrant, rwReleaseResponse, rwStateResponse } from "./schemas.js";

/** The read-write lock's operations in the OpenAPI document, by path under its mount point (/v1/rwlocks). */
export const rwLockOperations: Operations = {};
for (const mode of ["read", "write"] as const) {
  const Mode = mode === "read" ? "Read" : "Write";
  rwLockOperations[`/{name}/${mode}/acquire`] = {
    post: {
      operationId: `rwlock${Mode}Acquire`,
      summary: `Acquire or re-enter a ${mode} lock`,
      body: ["RwAcquireRequest", rwAcquireBody],
      ok: [200, "RwGrant", rwGrant],
      errors: WRITE_ERRORS,
    },
  };
  rwLockOperations[`/{name}/${mode}/wait`] = {
    get: waitSocketOp(`rwlock${Mode}Wait`, `Wait for a ${mode} lock over a WebSocket`, LOCK_SOCKET_MESSAGES),
  };
  rwLockOperations[`/{name}/${mode}/heartbeat`] = { post: heartbeatOp(`rwlock${Mode}Heartbeat`, "Extend a read-write lock holder's lease") };
  rwLockOperations[`/{name}/${mode}/release`] = {
    post: {
      operationId: `rwlock${Mode}Release`,
      summary: `Release one ${mode} hold`,
      body: releaseRequest,
      ok: [200, "RwReleaseResponse", rwReleaseResponse],
      errors: WRITE_ERRORS,
    },
  };
}
rwLockOperations["/{name}/heartbeat"] = { post: heartbeatOp("rwlockHeartbeat", "Extend a read-write lock holder's lease, whatever it holds") };
rwLockOperations["/{name}/release"] = {
  post: {
    operationId: "rwlockRelease",
    summary: "Release the token's write hold, or else one read hold",
    body: releaseRequest,
    ok: [200, "RwReleaseResponse", rwReleaseResponse],
    errors: WRITE_ERRORS,
  },
};
rwLockOperations["/{name}"] = {
  get: { operationId: "rwlockInspect", summary: "Inspect a read-write lock", ok: [200, "RwState", rwStateResponse], errors: READ_ERRORS },
};
