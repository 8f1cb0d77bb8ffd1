import { ELECTION, type ElectionView } from "./types.js";
import { kindOps, type LockRef, type LockStore } from "../../store/types.js";

/** No change is after this position: an observe that answers only who leads and the last position. */
const NONE_AFTER = Number.MAX_SAFE_INTEGER;

/** Who leads, from an election's view: value, term, since and end of its lease (nulls when nobody leads), and the history's last position. */
export function leaderOf(view: ElectionView) {
  const { leader, position } = view;
  if (!leader) return { value: null, term: null, since: null, expiresAt: null, position };
  // A fence is the store's clock in µs when it was issued (or one past the last, when that is ahead: docs/guarantees.md).
  return { value: leader.value, term: leader.term, since: Math.floor(leader.term / 1000), expiresAt: leader.expiresAt, position };
}

/** Who leads now (and the last position), from the store. */
export const leaderIn = async (store: LockStore, ref: LockRef) => leaderOf(await kindOps(store, ELECTION).observe(ref, { since: NONE_AFTER }));

/**
 * What its watch socket reads at a position (GET .../watch?since=N): the state its GET answers and the
 * kept changes after `since`, in one read of the store (lua/election/observe.lua; durableElection.ts).
 */
export async function watchedHistory(store: LockStore, ref: LockRef, waiters: () => number, since: number) {
  const view = await kindOps(store, ELECTION).observe(ref, { since });
  const { position, first, changes } = view;
  return { state: { name: ref.name, ...leaderOf(view), waiters: waiters() }, history: { position, first, changes } };
}
