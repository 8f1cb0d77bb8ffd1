import { leaseOperations } from "../../http/operations/leaseOperations.js";
import { semaphoreReleaseResponse, semaphoreStateResponse } from "./schemas.js";
import { releaseSemaphore, semaphoreAcquire } from "./service.js";
import { SEMAPHORE } from "./types.js";

/** /v1/semaphores/{name}: the counting semaphore, one value per operation (docs/API.md "Semaphore"). */
export const semaphoreOperations = leaseOperations({
  key: SEMAPHORE,
  names: "Semaphore",
  acquire: ["Take permits of a counting semaphore", semaphoreAcquire],
  wait: "Wait for semaphore permits over a WebSocket",
  heartbeat: "Extend a semaphore holder's lease",
  release: ["Give a holder's permits back", semaphoreReleaseResponse, releaseSemaphore],
  inspect: ["Inspect a semaphore", semaphoreStateResponse],
});
