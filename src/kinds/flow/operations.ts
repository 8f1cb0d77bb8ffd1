import { heartbeatOperation, lockWaitSocket, READ_ERRORS, releaseRequest, WRITE_ERRORS } from "../../http/operations/leaseOperations.js";
import { operation } from "../../http/operations/operation.js";
import { flowAcquireBody, flowGrant, flowReleaseResponse, flowStateResponse } from "./schemas.js";
import { acquireSlot, heartbeatSlot, inspectFlow, releaseSlot } from "./service.js";

/** /v1/flows/{name}: the flow limit, one value per operation (docs/API.md "Flow limit"). */
export const flowOperations = [
  operation({
    method: "post",
    step: "acquire",
    operationId: "flowAcquire",
    summary: "Take a slot of a flow limit (concurrency and rate)",
    needs: ["acquire"],
    body: ["FlowAcquireRequest", flowAcquireBody],
    ok: [[200, "FlowGrant", flowGrant]],
    errors: WRITE_ERRORS,
    run: async (ctx, name, body, signal) => {
      const { grant, delivery } = await acquireSlot(ctx, name, body, signal);
      return { body: grant, delivery };
    },
  }),
  lockWaitSocket("wait", "flowWait", "Wait for a flow slot over a WebSocket"),
  heartbeatOperation("heartbeat", "flowHeartbeat", "Extend a flow slot's lease", heartbeatSlot),
  operation({
    method: "post",
    step: "release",
    operationId: "flowRelease",
    summary: "Give a flow slot back",
    needs: ["release"],
    body: releaseRequest,
    ok: [[200, "FlowReleaseResponse", flowReleaseResponse]],
    errors: WRITE_ERRORS,
    onLease: true,
    run: async (ctx, name, body) => ({ body: await releaseSlot(ctx, name, body.token) }),
  }),
  operation({
    method: "get",
    step: "",
    operationId: "flowInspect",
    summary: "Inspect a flow limit",
    needs: ["inspect"],
    ok: [[200, "FlowState", flowStateResponse]],
    errors: READ_ERRORS,
    run: async (ctx, name) => ({ body: { name, ...(await inspectFlow(ctx, name)) } }),
  }),
];
