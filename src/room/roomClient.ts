import type { Env } from "../env";
import { LockedError, StoreUnavailableError } from "../errors";
import { withDeadline } from "../deadline";
import { storeConfigOf } from "../store/storeConfig";
import type { MutexGrant } from "../store/types";
import type { WaitOutcome, WatchedLease } from "./types";

const ROOM_CALL_TIMEOUT_MS = 2000;

/** The Worker's handle on one lock's LockRoom. */
export function roomFor(env: Env, ns: string, kind: WatchedLease["kind"], name: string) {
  const stub = env.LOCK_ROOM.get(env.LOCK_ROOM.idFromName(`${kind}:${ns}:${name}`));
  const call = <T>(what: string, fn: () => Promise<T>) => withDeadline(`room ${what}`, ROOM_CALL_TIMEOUT_MS, fn);

  return {
    /**
     * Waits in the room for the lock. The request's signal goes along, so a
     * client that disconnects leaves the queue at once.
     */
    async waitForMutex(body: { ttlMs: number; waitMs: number; onExpire?: string }, signal?: AbortSignal): Promise<MutexGrant> {
      const store = storeConfigOf(env);
      const outcome = await withDeadline("room wait", body.waitMs + 2 * store.timeoutMs + 1000, async () => {
        const res = await stub.fetch("https://room/wait", {
          method: "POST",
          body: JSON.stringify({ store, ns, name, ...body }),
          signal,
        });
        return (await res.json()) as WaitOutcome;
      });
      if (outcome.status === "granted") return outcome.grant;
      if (outcome.status === "timeout") throw new LockedError(outcome.retryAfterMs);
      throw new StoreUnavailableError(outcome.message);
    },
    watch: (lease: Omit<WatchedLease, "kind" | "ns" | "name" | "store">) =>
      call("watch", () => stub.watch({ ...lease, kind, ns, name, store: storeConfigOf(env) })),
    leaseMoved: (fence: number, expiresAt: number) => call("leaseMoved", () => stub.leaseMoved(fence, expiresAt)),
    released: (fence: number) => call("released", () => stub.released(fence)),
    waiterCount: () => call("waiterCount", () => stub.waiterCount()),
  };
}
