/**
 * What every resource's fence helper does, whatever holds the resource
 * (Redis, SQL, Durable Object storage): the one shape a lease's claim needs.
 */
export interface FenceClaimer {
  /**
   * Record "fence `fence` now owns `resource`", so any write with a lower
   * fence is refused from now on. An equal fence again is accepted (a retry,
   * or a holder that claims twice). Rejects with StaleFenceError, recording
   * nothing, when the resource has already seen a higher fence.
   */
  claim(resource: string, fence: number): Promise<unknown>;
}
