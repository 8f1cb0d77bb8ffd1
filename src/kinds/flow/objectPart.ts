import { FLOW, type FlowGrant, type FlowLimit, mismatch } from "./types.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import { kindOps } from "../../store/types.js";
import { newOwnerToken } from "../../tokens.js";
import { holderLinePolicy } from "../manyHolders/holderLinePolicy.js";
import { HoldersObjectPart } from "../manyHolders/objectPart.js";

interface FlowWaitRequest extends FlowLimit {
  ttlMs: number;
  watch: boolean;
}

/**
 * The flow limit's part of its lock object: waiters are granted in order
 * while the limit admits them. A waiter the window stops is woken when the
 * window admits its start (the line's next step at the store's retryAfterMs,
 * the object's timer), with no release needed.
 */
export const flowObjectPart = (host: LockObjectHost) =>
  new HoldersObjectPart<typeof FLOW, FlowWaitRequest, FlowGrant>(host, {
    kind: FLOW,
    policy: holderLinePolicy<FlowWaitRequest, FlowGrant>({
      admit: (store, ref, waiters, more) => kindOps(store, FLOW).admit(ref, waiters, more),
      withdraw: (store, ref, input) => kindOps(store, FLOW).withdraw(ref, input),
      ungate: (store, ref) => kindOps(store, FLOW).ungate(ref),
    }),
    queued: (req) => ({
      ...(req.concurrency === undefined ? {} : { concurrency: req.concurrency }),
      ...(req.rate === undefined ? {} : { rate: req.rate }),
      ttlMs: req.ttlMs,
      watch: req.onExpire !== undefined,
      holder: req.holder,
    }),
    endedWatch: (r) => r.watched,
    releaseInput: (token, requestId) => ({ token, requestId }),
    releaseAnswer: (r) => ({ released: true, held: r.held }),
    async tryOnce(store, req) {
      const r = await kindOps(store, FLOW).acquire(req.ref, {
        token: req.newToken ?? newOwnerToken(),
        concurrency: req.concurrency,
        rate: req.rate,
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
          return { status: "refused", ...mismatch(r.limit) };
      }
    },
  });
