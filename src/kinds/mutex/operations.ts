import { heartbeatOperation, lockWaitSocket, READ_ERRORS, releaseRequest, WRITE_ERRORS } from "../../http/operations/leaseOperations.js";
import { operation } from "../../http/operations/operation.js";
import { mutexAcquireBody, mutexGrant, mutexStateResponse, releaseResponse } from "./schemas.js";
import { acquireMutex, heartbeatMutex, inspectMutex, releaseMutex } from "./service.js";

/** /v1/locks/{name}: the re-entrant mutex with fencing tokens, one value per operation (docs/API.md "Mutex"). */
export const mutexOperations = [
  operation({
    method: "post",
    step: "acquire",
    operationId: "mutexAcquire",
    summary: "Acquire or re-enter a mutex",
    needs: ["acquire"],
    body: ["MutexAcquireRequest", mutexAcquireBody],
    ok: [[200, "MutexGrant", mutexGrant]],
    errors: WRITE_ERRORS,
    run: async (ctx, name, body, signal) => {
      const { grant, delivery } = await acquireMutex(ctx, name, body, signal);
      return { body: grant, delivery };
    },
  }),
  lockWaitSocket("wait", "mutexWait", "Wait for a mutex over a WebSocket"),
  heartbeatOperation("heartbeat", "mutexHeartbeat", "Extend a mutex lease", heartbeatMutex),
  operation({
    method: "post",
    step: "release",
    operationId: "mutexRelease",
    summary: "Release one level of a mutex hold",
    needs: ["release"],
    body: releaseRequest,
    ok: [[200, "MutexReleaseResponse", releaseResponse]],
    errors: WRITE_ERRORS,
    onLease: true,
    run: async (ctx, name, body) => ({ body: await releaseMutex(ctx, name, body.token) }),
  }),
  operation({
    method: "get",
    step: "",
    operationId: "mutexInspect",
    summary: "Inspect a mutex",
    needs: ["inspect"],
    ok: [[200, "MutexState", mutexStateResponse]],
    errors: READ_ERRORS,
    run: async (ctx, name) => ({ body: { name, ...(await inspectMutex(ctx, name)) } }),
  }),
];
