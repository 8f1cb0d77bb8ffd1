import type { KindLine } from "../lockObject/KindObjectPart.js";
import type { Admission, LinePolicy, QueuedWaiter } from "../lockObject/line/LinePolicy.js";
import type { KindKey, KindName, OpsOf } from "../store/kinds.js";
import { kindOps, type LockRef, type LockStore, type WithdrawReason } from "../store/types.js";

/**
 * A kind's line step on its own store operations (`ops`: the kind's member of
 * the store the line is on), where the core's LinePolicy is handed the store.
 */
export interface LineSteps<Ops, Req, Grant> {
  readonly batch: number;
  admit(ops: Ops, ref: LockRef, waiters: ReadonlyArray<QueuedWaiter<Req>>, more: boolean): Promise<Admission<Grant>>;
  idle?(ops: Ops, ref: LockRef): Promise<void>;
  withdraw(ops: Ops, ref: LockRef, token: string, reason: WithdrawReason): Promise<boolean>;
}

/**
 * The core's LinePolicy of a kind's line steps: the kind's operations on a
 * store looked up once per store (an object's line is on one store, kept as
 * long as the object), not at every store step.
 */
export function onStores<K extends KindKey<KindName>, Req, Grant>(key: K, steps: LineSteps<OpsOf<K>, Req, Grant>): LinePolicy<Req, Grant> {
  const known = new WeakMap<LockStore, OpsOf<K>>();
  const opsOn = (store: LockStore): OpsOf<K> => {
    let ops = known.get(store);
    if (ops === undefined) {
      ops = kindOps(store, key);
      known.set(store, ops);
    }
    return ops;
  };
  const { idle } = steps;
  return {
    batch: steps.batch,
    admit: (store, ref, waiters, more) => steps.admit(opsOn(store), ref, waiters, more),
    ...(idle ? { idle: (store: LockStore, ref: LockRef) => idle.call(steps, opsOn(store), ref) } : {}),
    withdraw: (store, ref, token, reason) => steps.withdraw(opsOn(store), ref, token, reason),
  };
}

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
