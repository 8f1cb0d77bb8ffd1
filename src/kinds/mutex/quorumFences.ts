import type { MutexGrant } from "./types.js";

/** Which fence a quorum's answers stand for (quorumMutex.ts). */

/**
 * The lease's fence from a majority's answers: the fence the quorum agreed
 * (lua/mutex/raise_fence.lua recorded it on a majority, and any majority of answers
 * includes one of those). A database that granted too late to be counted
 * answers a fence of its own, larger or smaller, which is not the lease's.
 * The largest agreed one, as a retried acquire may have agreed a second.
 */
export function leaseFence(answers: Array<{ fence: number; quorumFence?: number }>): number {
  const agreed = answers.flatMap((a) => (a.quorumFence === undefined ? [] : [a.quorumFence]));
  return agreed.length ? Math.max(...agreed) : Math.min(...answers.map((a) => a.fence));
}

/**
 * A new grant's fence: the largest of what the majority answered, a fence
 * a first try already agreed (a retry finds it on the databases that granted
 * then) and each database's own. A database where this token's lease is
 * fresh issued its fence above every grant it held since, so the agreed one
 * alone is not enough: a try's grant can outlive its take-back on one
 * database (its release did not arrive) while another client is granted on
 * the others and answered a larger fence; the token's next try (the
 * library's polling keeps its token) then finds the old agreed fence there
 * and must still answer above that client's. A retry that finds only the
 * grants its first try counted answers the agreed fence again (their own
 * fences are among those it was the largest of).
 */
export function grantFence(grants: MutexGrant[]): number {
  return Math.max(...grants.flatMap((x) => (x.quorumFence === undefined ? [x.fence] : [x.fence, x.quorumFence])));
}
