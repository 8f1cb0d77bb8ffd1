import { leaseOperations } from "../../http/operations/leaseOperations.js";
import { flowReleaseResponse, flowStateResponse } from "./schemas.js";
import { flowAcquire, releaseSlot } from "./service.js";
import { FLOW } from "./types.js";

/** /v1/flows/{name}: the flow limit, one value per operation (docs/API.md "Flow limit"). */
export const flowOperations = leaseOperations({
  key: FLOW,
  names: "Flow",
  acquire: ["Take a slot of a flow limit (concurrency and rate)", flowAcquire],
  wait: "Wait for a flow slot over a WebSocket",
  heartbeat: "Extend a flow slot's lease",
  release: ["Give a flow slot back", flowReleaseResponse, releaseSlot],
  inspect: ["Inspect a flow limit", flowStateResponse],
});
