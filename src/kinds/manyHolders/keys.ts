import type { LockRef } from "../../store/types.js";
import { lockKeyBase } from "../../store/redis/lockKeyBase.js";

/** A many-holder lock's hash of holders, its last fence, its gate, its ended tokens, remembered answers and watchers marker. */
export function holderKeys(tag: "rw" | "sem", ref: LockRef) {
  const k = lockKeyBase(tag, ref);
  return { lock: k.base, fence: k.fence, gate: `${k.base}:gate`, ended: k.ended, request: k.request, watchers: k.watchers };
}

export type HolderKeys = ReturnType<typeof holderKeys>;
