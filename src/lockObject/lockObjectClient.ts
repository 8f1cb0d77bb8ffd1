import type * as z from "zod/mini";
import { storeTimeoutMs, withDeadline } from "../deadline.js";
import type { Env } from "../env.js";
import { InternalError, StoreUnavailableError } from "../errors.js";
import type { KindName } from "../store/kinds.js";
import { classifyObjectFault } from "../store/durable/objectFaults.js";
import type { LockRef } from "../store/types.js";
import { lockObjectOf } from "./lockObjectOf.js";
import { type WaitOutcome, type WaitRequest, waitOutcomeSchema } from "./line/waitProtocol.js";

/** How long a quick call to a lock object may take before it counts as unavailable. */
const OBJECT_CALL_TIMEOUT_MS = 2000;

/** The Worker's typed handle on one lock's LockObject, for any kind. */
export function lockObjectClient(env: Env, kind: KindName, ref: LockRef) {
  const stub = lockObjectOf(env.LOCK_OBJECT, kind, ref);
  const call = async <T>(what: string, fn: () => Promise<T>, timeoutMs = OBJECT_CALL_TIMEOUT_MS): Promise<T> => {
    try {
      return await withDeadline(`lock object ${what}`, timeoutMs, fn);
    } catch (err) {
      throw classifyObjectFault(what, err);
    }
  };

  return {
    /**
     * Waits in the object's line (or tries once, with a watch). The request's
     * signal goes along, so where the platform reports a disconnect the
     * waiter leaves the line at once.
     */
    wait: async <Grant>(req: WaitRequest, grant: z.ZodMiniType<Grant>, signal?: AbortSignal): Promise<WaitOutcome<Grant>> => {
      let body: unknown;
      try {
        body = await withDeadline("lock object wait", req.waitMs + 2 * storeTimeoutMs(env) + 1000, async () => {
          const res = await stub.fetch("https://lock-object/wait", { method: "POST", body: JSON.stringify(req), signal });
          return res.json();
        });
      } catch (err) {
        // The object answers every outcome (bugs included) as JSON, so a throw is the
        // platform's: the object was reset, overloaded or unreachable.
        if (err instanceof StoreUnavailableError) throw err;
        throw new StoreUnavailableError(`the lock object did not answer wait: ${String((err as Error)?.message ?? err).slice(0, 200)}`, "unknown");
      }
      const parsed = waitOutcomeSchema(grant).safeParse(body);
      if (!parsed.success) throw new InternalError(`the lock object answered wait with ${JSON.stringify(body).slice(0, 200)}`);
      return parsed.data;
    },
    /** Redis store: a note of a write the Worker made there (a release, a key given up). */
    noteWrite: (note: unknown) => call("noteWrite", () => stub.noteWrite(kind, note)),
    /** Redis store: a write changed the lock (its watchers, if any, are pushed its new state). */
    noteChange: () => call("noteChange", () => stub.noteChange(kind)),
    pickedUp: (token: string) => call("pickedUp", () => stub.pickedUp(kind, token)),
    /** A grant from the line whose client was gone when its answer was written: back to the line now. */
    takeBack: (token: string) => call("takeBack", () => stub.takeBack(kind, token)),
    waiterCount: () => call("waiterCount", () => stub.waiterCount(kind)),
    /** The client of the HTTP wait `waiterId` hung up: it leaves the line. */
    withdraw: (waiterId: string) => call("withdraw", () => stub.withdraw(waiterId)),
  };
}
