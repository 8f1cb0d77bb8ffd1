import { inspectOperation, leaseOperations } from "../../http/operations/leaseOperations.js";
import { mutexStateResponse, releaseResponse } from "./schemas.js";
import { mutexAcquire, releaseMutex } from "./service.js";
import { MUTEX } from "./types.js";

/** /v1/locks/{name}: the re-entrant mutex with fencing tokens, one value per operation (docs/API.md "Mutex"). */
const mutex = { key: MUTEX, names: "Mutex" };
export const mutexOperations = [
  ...leaseOperations(mutex, {
    acquire: ["Acquire or re-enter a mutex", mutexAcquire],
    wait: "Wait for a mutex over a WebSocket",
    heartbeat: "Extend a mutex lease",
    release: ["Release one level of a mutex hold", releaseResponse, releaseMutex],
  }),
  inspectOperation(mutex, "Inspect a mutex", mutexStateResponse),
];
