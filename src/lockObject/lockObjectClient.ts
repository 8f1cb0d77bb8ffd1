import { withDeadline } from "../deadline.js";
import { InternalError, StoreUnavailableError } from "../errors.js";
import type { Env } from "../env.js";
import type { IdempotencyBeginInput, IdempotencyBeginResult } from "../kinds/idempotency/types.js";
import type { MutexGrant } from "../kinds/mutex/types.js";
import type * as z from "zod/mini";
import { classifyObjectFault } from "../store/durable/DurableStore.js";
import type { LockRef } from "../store/LockRef.js";
import { storeTimeoutMs } from "../store/storeConfig.js";
import { type LockKindName, lockObjectOf } from "./lockObjectOf.js";
import { type ObjectStoreFault, type StoreKind, type WaitOutcome, type WaitRequest, waitOutcomeSchema } from "./waitProtocol.js";

/** How long a quick call to a lock object may take before it counts as unavailable. */
const OBJECT_CALL_TIMEOUT_MS = 2000;

/** The Worker's typed handle on one lock's LockObject. */
export function lockObjectClient(env: Env, kind: LockKindName, ref: LockRef) {
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
    released: (fence: number, handedTo?: MutexGrant) => call("released", () => stub.released(ref, fence, handedTo)),
    /** A many-holder kind's release landed in Redis: the line may move, the holder's watch ends. */
    holderReleased: (kind: "rwlock" | "semaphore", token: string, endedWatch: boolean) =>
      call("holderReleased", () => stub.holderReleased(kind, ref, token, endedWatch)),
    pickedUp: (token: string) => call("pickedUp", () => stub.pickedUp(token)),
    idempotencyBeginWatched: async (input: IdempotencyBeginInput, onExpire: string, store: StoreKind): Promise<IdempotencyBeginResult> => {
      const r = await call<IdempotencyBeginResult | ObjectStoreFault>(
        "begin",
        async () => stub.idempotencyBeginWatched(ref, input, onExpire, store),
        storeTimeoutMs(env) + OBJECT_CALL_TIMEOUT_MS,
      );
      if (r.status === "unavailable") throw new StoreUnavailableError(r.message, r.outcome);
      return r;
    },
    ended: (fence: number) => call("ended", () => stub.ended(fence)),
    waiterCount: () => call("waiterCount", () => stub.waiterCount()),
  };
}

export type LockObjectClient = ReturnType<typeof lockObjectClient>;
