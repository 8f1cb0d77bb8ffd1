import type { Admission, QueuedWaiter, LinePolicy } from "../../lockObject/line/LinePolicy.js";
import type { WithdrawReason } from "../../store/types.js";
import type { LockRef } from "../../store/types.js";
import type { LockStore } from "../../store/types.js";
import { ADMIT_BATCH } from "./redisHolders.js";
import type { Admitted, HolderWithdrawResult, QueuedHolder } from "./types.js";

/**
 * The waiting of a many-holder kind: one store step grants, in order, every
 * waiter at the front that can be granted (a batch of readers, the permits
 * that fit), and leaves the first that cannot in the store's gate.
 */
export function holderLinePolicy<Req extends Omit<QueuedHolder, "token" | "markPickup">, Grant extends { token: string }>(ops: {
  admit(store: LockStore, ref: LockRef, waiters: Array<Req & QueuedHolder>, more: boolean): Promise<Admitted<Grant>>;
  withdraw(store: LockStore, ref: LockRef, input: { token: string; reason: WithdrawReason }): Promise<HolderWithdrawResult>;
  ungate(store: LockStore, ref: LockRef): Promise<void>;
}): LinePolicy<Req, Grant> {
  return {
    batch: ADMIT_BATCH,
    async admit(store, ref, waiters: ReadonlyArray<QueuedWaiter<Req>>, more): Promise<Admission<Grant>> {
      const firstTries = new Set(waiters.filter((w) => w.firstTry).map((w) => w.token));
      const r = await ops.admit(
        store,
        ref,
        waiters.map((w) => ({ ...w.req, token: w.token, markPickup: !w.firstTry })),
        more,
      );
      return {
        granted: r.granted.map((grant) => ({ token: grant.token, grant, pickup: !firstTries.has(grant.token) })),
        refused: r.refused,
        ...(r.retryAfterMs === undefined ? {} : { retryInMs: r.retryAfterMs }),
      };
    },
    idle: (store, ref) => ops.ungate(store, ref),
    async withdraw(store, ref, token, reason) {
      return (await ops.withdraw(store, ref, { token, reason })).status === "revoked";
    },
  };
}
