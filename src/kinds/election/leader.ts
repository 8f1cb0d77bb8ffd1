import { ELECTION } from "./types.js";
import type { ObjectKind } from "../../lockObject/ObjectKinds.js";
import { kindOps } from "../../store/types.js";
import type { MutexState } from "../mutex/types.js";

/** Who leads, from the state of the election's lease: its value, term, since and end, or nulls when nobody leads. */
export function leaderOf(state: MutexState) {
  if (!state.held || state.fence === null) return { value: null, term: null, since: null, expiresAt: null };
  // A fence is the store's clock in µs when it was issued (or one past the last, when that is ahead: docs/guarantees.md).
  return { value: state.holder, term: state.fence, since: Math.floor(state.fence / 1000), expiresAt: state.expiresAt };
}

/** An election's state as its GET answers it, pushed to its watch sockets. */
export const watchedLeader: ObjectKind["object"]["watchedState"] = async (store, ref, waiters) => ({
  name: ref.name,
  ...leaderOf(await kindOps(store, ELECTION).inspect(ref)),
  waiters: waiters(),
});
