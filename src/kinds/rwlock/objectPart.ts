import { RWLOCK } from "./types.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import { kindOps } from "../../store/types.js";
import { newOwnerToken, newRequestId } from "../../tokens.js";
import { grantedOrLocked, HoldersObjectPart, leaseOfWait } from "../manyHolders/objectPart.js";
import type { LineRequest } from "../manyHolders/types.js";
import type { RwGrant, RwQueuedHolder } from "./types.js";

/** The read-write lock's part of its lock object: readers up to the next writer are admitted together. */
export const rwLockObjectPart = (host: LockObjectHost) =>
  new HoldersObjectPart<typeof RWLOCK, LineRequest<RwQueuedHolder>, RwGrant>(host, {
    kind: RWLOCK,
    queued: (req) => ({ mode: req.mode, ...leaseOfWait(req) }),
    endedWatch: (r) => r.released && r.watched,
    releaseInput: (token, requestId) => ({ token, mode: "any", requestId }),
    releaseAnswer: (r) => ({ released: r.released, mode: r.mode, count: r.count }),
    async tryOnce(store, req) {
      const r = await kindOps(store, RWLOCK).acquire(req.ref, {
        mode: req.mode,
        token: req.token ?? req.newToken ?? newOwnerToken(),
        reenter: req.token !== undefined,
        requestId: req.requestId ?? newRequestId(),
        ...leaseOfWait(req),
      });
      if (r.status === "lost") return { status: "lost" };
      if (r.status === "upgrade") return { status: "refused", ...UPGRADE_REFUSED };
      return grantedOrLocked(r);
    },
  });

export const UPGRADE_REFUSED = {
  code: "upgrade_not_supported",
  message:
    "a read lock cannot become a write lock (two readers upgrading would wait for each other forever): release the read, then acquire the write",
};
