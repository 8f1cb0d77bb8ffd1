import type { KindLine } from "../lockObject/KindObjectPart.js";
import type { LinePolicy } from "../lockObject/line/LinePolicy.js";

/**
 * A kind's line as its lock object drives it: its store step (`policy`, which
 * takes what of a wait the store needs) reading the wait request itself, through
 * `queued`, so the core hands the kind the request as it came and asks it one
 * thing per store step, never first what a wait is to the line.
 */
export function kindLine<Wait, Req, Grant>(queued: (req: Wait) => Req, policy: LinePolicy<Req, Grant>): KindLine<Wait, Grant> {
  return {
    policy: {
      batch: policy.batch,
      admit: (store, ref, waiters, more) =>
        policy.admit(
          store,
          ref,
          waiters.map((w) => ({ ...w, req: queued(w.req) })),
          more,
        ),
      ...(policy.idle ? { idle: policy.idle.bind(policy) } : {}),
      withdraw: (store, ref, token, reason) => policy.withdraw(store, ref, token, reason),
    },
  };
}
