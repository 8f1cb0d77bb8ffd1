import { SEMAPHORE } from "./types.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import { kindOps } from "../../store/types.js";
import { newOwnerToken } from "../../tokens.js";
import { holderLinePolicy } from "../manyHolders/holderLinePolicy.js";
import { HoldersObjectPart } from "../manyHolders/objectPart.js";
import type { SemaphoreGrant } from "./types.js";

interface SemaphoreWaitRequest {
  limit: number;
  permits: number;
  ttlMs: number;
  watch: boolean;
}

/** The semaphore's part of its lock object: waiters are granted in order while their permits fit. */
export const semaphoreObjectPart = (host: LockObjectHost) =>
  new HoldersObjectPart<typeof SEMAPHORE, SemaphoreWaitRequest, SemaphoreGrant>(host, {
    kind: SEMAPHORE,
    policy: holderLinePolicy<SemaphoreWaitRequest, SemaphoreGrant>({
      admit: (store, ref, waiters, more) => kindOps(store, SEMAPHORE).admit(ref, waiters, more),
      withdraw: (store, ref, input) => kindOps(store, SEMAPHORE).withdraw(ref, input),
      ungate: (store, ref) => kindOps(store, SEMAPHORE).ungate(ref),
    }),
    queued: (req) => ({ limit: req.limit, permits: req.permits, ttlMs: req.ttlMs, watch: req.onExpire !== undefined, holder: req.holder }),
    endedWatch: (r) => r.watched,
    releaseInput: (token, requestId) => ({ token, requestId }),
    releaseAnswer: (r) => ({ released: true, permits: r.permits, available: r.available }),
    async tryOnce(store, req) {
      const r = await kindOps(store, SEMAPHORE).acquire(req.ref, {
        token: req.newToken ?? newOwnerToken(),
        limit: req.limit,
        permits: req.permits,
        ttlMs: req.ttlMs,
        watch: req.onExpire !== undefined,
        holder: req.holder,
      });
      switch (r.status) {
        case "granted":
          return { status: "granted", grant: r.grant, pickup: false };
        case "busy":
          return { status: "locked", retryAfterMs: r.retryAfterMs, ...(r.current ? { current: r.current } : {}) };
        case "limit_mismatch":
          return { status: "refused", code: "limit_mismatch", message: limitMismatchMessage(r.limit) };
      }
    },
  });

export const limitMismatchMessage = (limit: number) =>
  `the semaphore's holders use limit ${limit}; every acquire must ask for the same limit while anyone holds`;
