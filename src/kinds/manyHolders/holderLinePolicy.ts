import type { Admission, QueuedWaiter, LinePolicy } from "../../lockObject/line/LinePolicy.js";
import type { KindKey, KindName } from "../../store/kinds.js";
import type { LockRef } from "../../store/types.js";
import { onStores } from "../kindLine.js";
import { ADMIT_BATCH } from "./redisHolders.js";
import type { Admitted, HolderOps, QueuedHolder } from "./types.js";

/** The store operations a many-holder kind's line uses: its own admit, and the holders' withdraw and ungate. */
interface LineOps<Req, Grant> extends Pick<HolderOps, "withdraw" | "ungate"> {
  admit(ref: LockRef, waiters: Array<Req & QueuedHolder>, more: boolean): Promise<Admitted<Grant>>;
}

/**
 * The waiting of a many-holder kind: one store step grants, in order, every
 * waiter at the front that can be granted (a batch of readers, the permits
 * that fit), and leaves the first that cannot in the store's gate.
 */
export function holderLinePolicy<Req extends Omit<QueuedHolder, "token" | "markPickup">, Grant extends { token: string }>(
  kind: KindKey<KindName, LineOps<Req, Grant>>,
): LinePolicy<Req, Grant> {
  return onStores<KindKey<KindName, LineOps<Req, Grant>>, Req, Grant>(kind, {
    batch: ADMIT_BATCH,
    async admit(ops, ref, waiters: ReadonlyArray<QueuedWaiter<Req>>, more): Promise<Admission<Grant>> {
      const firstTries = new Set(waiters.filter((w) => w.firstTry).map((w) => w.token));
      const r = await ops.admit(
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
    idle: (ops, ref) => ops.ungate(ref),
    async withdraw(ops, ref, token, reason) {
      return (await ops.withdraw(ref, { token, reason })).status === "revoked";
    },
  });
}
