import { RWLOCK } from "./types.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import { kindOps } from "../../store/types.js";
import { newOwnerToken, newRequestId } from "../../tokens.js";
import { holderLinePolicy } from "../manyHolders/holderLinePolicy.js";
import { HoldersObjectPart } from "../manyHolders/objectPart.js";
import type { RwGrant, RwMode } from "./types.js";

interface RwWaitRequest {
  mode: RwMode;
  ttlMs: number;
  watch: boolean;
}

/** The read-write lock's part of its lock object: readers up to the next writer are admitted together. */
export const rwLockObjectPart = (host: LockObjectHost) =>
  new HoldersObjectPart<typeof RWLOCK, RwWaitRequest, RwGrant>(host, {
    kind: RWLOCK,
    policy: holderLinePolicy<RwWaitRequest, RwGrant>({
      admit: (store, ref, waiters, more) => kindOps(store, RWLOCK).admit(ref, waiters, more),
      withdraw: (store, ref, input) => kindOps(store, RWLOCK).withdraw(ref, input),
      ungate: (store, ref) => kindOps(store, RWLOCK).ungate(ref),
    }),
    queued: (req) => ({ mode: req.mode, ttlMs: req.ttlMs, watch: req.onExpire !== undefined, holder: req.holder }),
    endedWatch: (r) => r.released && r.watched,
    releaseInput: (token, requestId) => ({ token, mode: "any", requestId }),
    releaseAnswer: (r) => ({ released: r.released, mode: r.mode, count: r.count }),
    async tryOnce(store, req) {
      const r = await kindOps(store, RWLOCK).acquire(req.ref, {
        mode: req.mode,
        token: req.token ?? req.newToken ?? newOwnerToken(),
        reenter: req.token !== undefined,
        ttlMs: req.ttlMs,
        watch: req.onExpire !== undefined,
        requestId: req.requestId ?? newRequestId(),
        holder: req.holder,
      });
      switch (r.status) {
        case "granted":
          return { status: "granted", grant: r.grant, pickup: false };
        case "busy":
          return { status: "locked", retryAfterMs: r.retryAfterMs, ...(r.current ? { current: r.current } : {}) };
        case "lost":
          return { status: "lost" };
        case "upgrade":
          return { status: "refused", ...UPGRADE_REFUSED };
      }
    },
  });

export const UPGRADE_REFUSED = {
  code: "upgrade_not_supported",
  message:
    "a read lock cannot become a write lock (two readers upgrading would wait for each other forever): release the read, then acquire the write",
};
