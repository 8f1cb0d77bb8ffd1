import type * as z from "zod/mini";
import { LockedError } from "../errors.js";
import { confirmPickup } from "../lockObject/confirmPickup.js";
import { grantOf } from "../lockObject/grantOf.js";
import { lockObjectClient } from "../lockObject/lockObjectClient.js";
import type { KindWait, WaitingKindName } from "../kinds/registry/ops.js";
import type { LockRef } from "../store/LockRef.js";
import type { WaitOutcome } from "../lockObject/waitProtocol.js";
import type { ServiceContext } from "./ServiceContext.js";

/** A grant, and for a grant from the line, what to tell the lock object once its answer went out or could not. */
export interface AcquireAnswer<Grant> {
  grant: Grant;
  delivery?: GrantDelivery;
}

/** A grant from the line on its way to an HTTP client (see http/deliveryConfirmed.ts). */
export interface GrantDelivery {
  /** The answer went out whole: the holder has it. */
  confirm(): Promise<unknown>;
  /** The client was gone when the answer was written: the grant goes back to the line at once. */
  giveBack(): Promise<unknown>;
}

/** What one waiting kind brings to the acquire flow. */
export interface AcquireSteps<K extends WaitingKindName, Grant extends { token: string }> {
  kind: K;
  ref: LockRef;
  /**
   * One try in the store, when the flow starts there: the grant, or undefined
   * to wait in the line. It throws what the caller gets instead (busy with no
   * wait, a lost lease, a refusal).
   */
  tryStore?: () => Promise<Grant | undefined>;
  /** The request to the lock object: wait in its line, or one try with a watch. */
  wait: KindWait[K];
  grantSchema: z.ZodMiniType<Grant>;
  /** Marks a grant picked up in the store when the lock object cannot be told (confirmPickup). */
  heartbeat(token: string): Promise<{ status: "ok" | "lost" }>;
  /** The answer came from the line (the lock is contended). */
  fromLine?: () => void;
}

/**
 * The acquire of every waiting kind, in one place: the store first (an
 * uncontended try-lock or re-entry is one round trip and no object call),
 * then the kind's lock object (its line, or a try with a watch) for what is
 * left of waitMs, then, for a grant from the line, the confirmation that its
 * answer reached the client.
 */
export async function acquireFlow<K extends WaitingKindName, Grant extends { token: string }>(
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
  const object = lockObjectClient(ctx.env, steps.kind, steps.ref);
  // A client that hangs up while waiting leaves the line: the Worker says so itself, after the
  // answer, rather than rely on its request's abort reaching the object along the way.
  const waiterId = crypto.randomUUID();
  const hungUp = () => ctx.later("withdraw", () => object.withdraw(waiterId));
  signal?.addEventListener("abort", hungUp, { once: true });
  let outcome: WaitOutcome<Grant>;
  try {
    outcome = await object.wait({ ...steps.wait, waitMs, waiterId }, steps.grantSchema, signal);
  } finally {
    signal?.removeEventListener("abort", hungUp);
  }
  const grant = grantOf(outcome);
  if (outcome.status !== "granted" || !outcome.pickup) return { grant };
  steps.fromLine?.();
  return {
    grant,
    delivery: {
      confirm: confirmPickup(object, grant.token, () => steps.heartbeat(grant.token)),
      giveBack: () => object.takeBack(grant.token),
    },
  };
}
