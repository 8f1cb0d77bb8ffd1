import type { LockRef } from "../../store/types.js";
import { lockKeyBase } from "../../store/redis/lockKeyBase.js";

/** A flow's keys (see lua/flow/acquire.lua): the holders' (lua/holders.lua's shape), and its starts and their limit. */
export function flowKeys(ref: LockRef) {
  const k = lockKeyBase("flow", ref);
  return {
    lock: k.base,
    fence: k.fence,
    gate: `${k.base}:gate`,
    ended: k.ended,
    request: k.request,
    watchers: k.watchers,
    starts: `${k.base}:starts`,
    limit: `${k.base}:limit`,
  };
}
