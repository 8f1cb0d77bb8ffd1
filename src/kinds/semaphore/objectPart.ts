import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import type { SemaphoreWait } from "../../lockObject/waitProtocol.js";
import { newOwnerToken } from "../../tokens.js";
import { holderQueuePolicy } from "../holders/holderQueuePolicy.js";
import { HoldersObjectPart } from "../holders/objectPart.js";
import type { SemaphoreGrant } from "./types.js";

interface SemaphoreWaitRequest {
  limit: number;
  permits: number;
  ttlMs: number;
  watch: boolean;
}

/** The semaphore's part of its lock object: waiters are granted in order while their permits fit. */
export const semaphoreObjectPart = (host: LockObjectHost) =>
  new HoldersObjectPart<SemaphoreWait, SemaphoreWaitRequest, SemaphoreGrant>(host, {
    kind: "semaphore",
    policy: holderQueuePolicy<SemaphoreWaitRequest, SemaphoreGrant>({
      admit: (store, ref, waiters, more) => store.semaphoreAdmit(ref, waiters, more),
      withdraw: (store, ref, input) => store.semaphoreWithdraw(ref, input),
      ungate: (store, ref) => store.semaphoreUngate(ref),
    }),
    queued: (req) => ({ limit: req.limit, permits: req.permits, ttlMs: req.ttlMs, watch: req.onExpire !== undefined }),
    isReentry: () => false,
    async tryOnce(store, req) {
      const r = await store.semaphoreAcquire(req.ref, {
        token: req.newToken ?? newOwnerToken(),
        limit: req.limit,
        permits: req.permits,
        ttlMs: req.ttlMs,
        watch: req.onExpire !== undefined,
      });
      switch (r.status) {
        case "granted":
          return { status: "granted", grant: r.grant, pickup: false };
        case "busy":
          return { status: "locked", retryAfterMs: r.retryAfterMs };
        case "limit_mismatch":
          return { status: "refused", code: "limit_mismatch", message: limitMismatchMessage(r.limit) };
      }
    },
  });

export const limitMismatchMessage = (limit: number) =>
  `the semaphore's holders use limit ${limit}; every acquire must ask for the same limit while anyone holds`;
