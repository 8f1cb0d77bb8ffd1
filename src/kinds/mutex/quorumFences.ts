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
 * A new grant's fence: the one a first try already agreed (a retry finds it
 * on the databases that granted then), else the largest the majority issued.
 */
export function grantFence(grants: MutexGrant[]): number {
  const agreed = grants.flatMap((x) => (x.quorumFence === undefined ? [] : [x.quorumFence]));
  return agreed.length ? Math.max(...agreed) : Math.max(...grants.map((x) => x.fence));
}
