import { leaseOperations } from "../../http/operations/leaseOperations.js";
import { mutexStateResponse, releaseResponse } from "./schemas.js";
import { mutexAcquire, releaseMutex } from "./service.js";
import { MUTEX } from "./types.js";

/** /v1/locks/{name}: the re-entrant mutex with fencing tokens, one value per operation (docs/API.md "Mutex"). */
export const mutexOperations = leaseOperations({
  key: MUTEX,
  names: "Mutex",
  acquire: ["Acquire or re-enter a mutex", mutexAcquire],
  wait: "Wait for a mutex over a WebSocket",
  heartbeat: "Extend a mutex lease",
  release: ["Release one level of a mutex hold", releaseResponse, releaseMutex],
  inspect: ["Inspect a mutex", mutexStateResponse],
});
