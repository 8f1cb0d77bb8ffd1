import { heartbeatOperation, lockWaitSocket, READ_ERRORS, releaseRequest, WRITE_ERRORS } from "../../http/operations/leaseOperations.js";
import { operation } from "../../http/operations/operation.js";
import { semaphoreAcquireBody, semaphoreGrant, semaphoreReleaseResponse, semaphoreStateResponse } from "./schemas.js";
import { acquireSemaphore, heartbeatSemaphore, inspectSemaphore, releaseSemaphore } from "./service.js";

/** /v1/semaphores/{name}: the counting semaphore, one value per operation (docs/API.md "Semaphore"). */
export const semaphoreOperations = [
  operation({
    method: "post",
    step: "acquire",
    operationId: "semaphoreAcquire",
    summary: "Take permits of a counting semaphore",
    needs: ["acquire"],
    body: ["SemaphoreAcquireRequest", semaphoreAcquireBody],
    ok: [[200, "SemaphoreGrant", semaphoreGrant]],
    errors: WRITE_ERRORS,
    run: async (ctx, name, body, signal) => {
      const { grant, delivery } = await acquireSemaphore(ctx, name, body, signal);
      return { body: grant, delivery };
    },
  }),
  lockWaitSocket("wait", "semaphoreWait", "Wait for semaphore permits over a WebSocket"),
  heartbeatOperation("heartbeat", "semaphoreHeartbeat", "Extend a semaphore holder's lease", heartbeatSemaphore),
  operation({
    method: "post",
    step: "release",
    operationId: "semaphoreRelease",
    summary: "Give a holder's permits back",
    needs: ["release"],
    body: releaseRequest,
    ok: [[200, "SemaphoreReleaseResponse", semaphoreReleaseResponse]],
    errors: WRITE_ERRORS,
    onLease: true,
    run: async (ctx, name, body) => ({ body: await releaseSemaphore(ctx, name, body.token) }),
  }),
  operation({
    method: "get",
    step: "",
    operationId: "semaphoreInspect",
    summary: "Inspect a semaphore",
    needs: ["inspect"],
    ok: [[200, "SemaphoreState", semaphoreStateResponse]],
    errors: READ_ERRORS,
    run: async (ctx, name) => ({ body: { name, ...(await inspectSemaphore(ctx, name)) } }),
  }),
];
