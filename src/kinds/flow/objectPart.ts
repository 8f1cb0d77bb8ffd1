import { FLOW, type FlowGrant, type FlowQueuedHolder, mismatch } from "./types.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import { kindOps } from "../../store/types.js";
import { newOwnerToken } from "../../tokens.js";
import { grantedOrLocked, HoldersObjectPart, leaseOfWait } from "../manyHolders/objectPart.js";
import type { LineRequest } from "../manyHolders/types.js";

/**
 * The flow limit's part of its lock object: waiters are granted in order
 * while the limit admits them. A waiter the window stops is woken when the
 * window admits its start (the line's next step at the store's retryAfterMs,
 * the object's timer), with no release needed.
 */
export const flowObjectPart = (host: LockObjectHost) =>
  new HoldersObjectPart<typeof FLOW, LineRequest<FlowQueuedHolder>, FlowGrant>(host, {
    kind: FLOW,
    queued: (req) => ({
      ...(req.concurrency === undefined ? {} : { concurrency: req.concurrency }),
      ...(req.rate === undefined ? {} : { rate: req.rate }),
      ...leaseOfWait(req),
    }),
    endedWatch: (r) => r.watched,
    releaseInput: (token, requestId) => ({ token, requestId }),
    releaseAnswer: (r) => ({ released: true, held: r.held }),
    async tryOnce(store, req) {
      const r = await kindOps(store, FLOW).acquire(req.ref, {
        token: req.newToken ?? newOwnerToken(),
        concurrency: req.concurrency,
        rate: req.rate,
        ...leaseOfWait(req),
      });
      if (r.status === "limit_mismatch") return { status: "refused", ...mismatch(r.limit) };
      return grantedOrLocked(r);
    },
  });
