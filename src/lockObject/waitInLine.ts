import type * as z from "zod/mini";
import type { Env } from "../env.js";
import { LeaseLostError } from "../errors.js";
import type { KindName } from "../store/kinds.js";
import type { LockRef } from "../store/types.js";
import { grantOrThrow } from "./line/grantOrThrow.js";
import type { WaitOutcome, WaitRequest } from "./line/waitProtocol.js";
import { lockObjectClient } from "./lockObjectClient.js";

/** A grant from the line on its way to its client (http/deliveryConfirmed.ts). */
export interface GrantDelivery {
  /** The answer went out whole: the holder has it. */
  confirm(): Promise<unknown>;
  /** The client was gone when the answer was written: the grant goes back to the line at once. */
  takeBack(): Promise<unknown>;
}

/** An HTTP waiter's wait in its lock object's line, as the Worker's acquire flow asks it (src/service/acquireFlow.ts). */
export interface LineWait<Grant> {
  env: Env;
  kind: KindName;
  ref: LockRef;
  /** The kind's request to the line, with what is left of waitMs. */
  req: WaitRequest;
  grant: z.ZodMiniType<Grant>;
  /** The request's signal: a client that hangs up leaves the line. */
  signal?: AbortSignal;
  /** Runs a step after the answer (the withdraw of a waiter whose client hung up). */
  afterAnswer(what: string, step: () => Promise<unknown>): void;
  /** Marks a grant picked up in the store, when the lock object cannot be told that its answer went out. */
  heartbeat(token: string): Promise<{ status: "ok" | "lost" }>;
}

/**
 * The Worker's wait in a lock object's line, in one call: the object's stub,
 * the wait, its outcome as the grant or the typed error its refusal stands for
 * (grantOrThrow), and for a grant from the line what confirms that its answer
 * reached the client (`delivery`).
 */
export async function waitInLine<Grant extends { token: string }>(wait: LineWait<Grant>): Promise<{ grant: Grant; delivery?: GrantDelivery }> {
  const { signal } = wait;
  const line = lockObjectClient(wait.env, wait.kind, wait.ref);
  // A client that hangs up while waiting leaves the line: the Worker says so itself, after the
  // answer, rather than rely on its request's abort reaching the object along the way.
  const waiterId = crypto.randomUUID();
  const hungUp = () => wait.afterAnswer("withdraw", () => line.withdraw(waiterId));
  signal?.addEventListener("abort", hungUp, { once: true });
  let outcome: WaitOutcome<Grant>;
  try {
    outcome = await line.wait({ ...wait.req, waiterId }, wait.grant, signal);
  } finally {
    signal?.removeEventListener("abort", hungUp);
  }
  const grant = grantOrThrow(outcome);
  if (outcome.status !== "granted" || !outcome.pickup) return { grant };
  const { token } = grant;
  return {
    grant,
    delivery: {
      // Told to the object; when it cannot be reached, marked in the store by a heartbeat (which clears the
      // grant's pickup mark), so the object's take-back leaves it alone either way.
      confirm: async () => {
        try {
          await line.pickedUp(token);
        } catch {
          const r = await wait.heartbeat(token);
          if (r.status === "lost") throw new LeaseLostError("the grant was gone before its delivery could be confirmed");
        }
      },
      takeBack: () => line.takeBack(token),
    },
  };
}
