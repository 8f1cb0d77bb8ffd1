import { SEMAPHORE } from "./types.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import { kindOps } from "../../store/types.js";
import { newOwnerToken } from "../../tokens.js";
import { grantedOrLocked, HoldersObjectPart, leaseOfWait } from "../manyHolders/objectPart.js";
import type { LineRequest } from "../manyHolders/types.js";
import type { SemaphoreGrant, SemaphoreQueuedHolder } from "./types.js";

/** The semaphore's part of its lock object: waiters are granted in order while their permits fit. */
export const semaphoreObjectPart = (host: LockObjectHost) =>
  new HoldersObjectPart<typeof SEMAPHORE, LineRequest<SemaphoreQueuedHolder>, SemaphoreGrant>(host, {
    kind: SEMAPHORE,
    queued: (req) => ({ limit: req.limit, permits: req.permits, ...leaseOfWait(req) }),
    endedWatch: (r) => r.watched,
    releaseInput: (token, requestId) => ({ token, requestId }),
    releaseAnswer: (r) => ({ released: true, permits: r.permits, available: r.available }),
    async tryOnce(store, req) {
      const token = req.newToken ?? newOwnerToken();
      const r = await kindOps(store, SEMAPHORE).acquire(req.ref, { token, limit: req.limit, permits: req.permits, ...leaseOfWait(req) });
      if (r.status === "limit_mismatch") return { status: "refused", code: "limit_mismatch", message: limitMismatchMessage(r.limit) };
      return grantedOrLocked(r);
    },
  });

export const limitMismatchMessage = (limit: number) =>
  `the semaphore's holders use limit ${limit}; every acquire must ask for the same limit while anyone holds`;
