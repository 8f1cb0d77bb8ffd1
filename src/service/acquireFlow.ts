import type * as z from "zod/mini";
import { LockedError } from "../errors.js";
import { type GrantDelivery, waitInLine } from "../lockObject/waitInLine.js";
import type { KindKey, WaitOf } from "../store/kinds.js";
import type { LockRef } from "../store/types.js";
import type { WaitRequest } from "../lockObject/line/waitProtocol.js";
import { countAcquire } from "../metrics.js";
import type { ServiceContext } from "./ServiceContext.js";

/** A grant, and for a grant from the line, what to tell the lock object once its answer went out or could not. */
export interface AcquireAnswer<Grant> {
  grant: Grant;
  delivery?: GrantDelivery;
}

/** What one waiting kind brings to the acquire flow. */
export interface AcquireSteps<K extends KindKey, Grant extends { token: string }> {
  kind: K["name"];
  ref: LockRef;
  /**
   * One try in the store, when the flow starts there: the grant, or undefined
   * to wait in the line. It throws what the caller gets instead (busy with no
   * wait, a lost lease, a refusal).
   */
  tryStore?: () => Promise<Grant | undefined>;
  /** The request to the lock object: wait in its line, or one try with a watch. */
  wait: WaitOf<K> & WaitRequest;
  grantSchema: z.ZodMiniType<Grant>;
  /** Marks a grant picked up in the store when the lock object cannot be told (waitInLine's delivery). */
  heartbeat(token: string): Promise<{ status: "ok" | "lost" }>;
  /** The answer came from the line (the lock is contended). */
  fromLine?: () => void;
}

/**
 * The acquire of every waiting kind over HTTP, in one place: the store first
 * (an uncontended try-lock or re-entry is one round trip and no object call),
 * then the lock's line in its object for what is left of waitMs, then, for a
 * grant from the line, what confirms that its answer reached the client. Each
 * grant and busy answer is counted (countAcquire, src/metrics.ts; a wait
 * socket's are counted in the lock object, which runs its acquire itself).
 */
export function acquireFlow<K extends KindKey, Grant extends { token: string }>(
  ctx: ServiceContext,
  steps: AcquireSteps<K, Grant>,
  signal?: AbortSignal,
): Promise<AcquireAnswer<Grant>> {
  return countAcquire(ctx.env, ctx.ns, steps.kind, () => acquire(ctx, steps, signal), signal);
}

async function acquire<K extends KindKey, Grant extends { token: string }>(
  ctx: ServiceContext,
  steps: AcquireSteps<K, Grant>,
  signal?: AbortSignal,
): Promise<AcquireAnswer<Grant>> {
  const startedAt = Date.now();
  const tried = await steps.tryStore?.();
  if (tried) return { grant: tried };
  // waitMs counts from here, not from the line: a store slow to answer the first try uses it up
  // too, so no grant is answered after the wait the client asked for.
  const waitMs = Math.max(0, steps.wait.waitMs - (Date.now() - startedAt));
  if (steps.wait.waitMs > 0 && waitMs === 0) throw new LockedError(1, "not acquired within waitMs (the store was slow to answer)");
  // The lock object only now, in one call (its wait, its outcome, the grant's delivery): an uncontended acquire, answered by the store, makes no stub.
  const { env, afterAnswer } = ctx;
  const answer = await waitInLine({
    env,
    kind: steps.kind,
    ref: steps.ref,
    req: { ...steps.wait, waitMs },
    grant: steps.grantSchema,
    signal,
    afterAnswer,
    heartbeat: steps.heartbeat,
  });
  if (answer.delivery) steps.fromLine?.();
  return answer;
}
