import type { Env } from "../env";
import { Mutex } from "../primitives/Mutex";
import type { LockStore, MutexGrant } from "../store/types";

// Placeholder until the LockRoom lands: waits by polling.
export function roomFor(env: Env, ns: string, kind: string, name: string) {
  return {
    async acquireMutex(store: LockStore, body: { ttlMs: number; waitMs: number; token?: string; onExpire?: string }): Promise<MutexGrant> {
      return new Mutex(store, name, { namespace: ns }).acquire(body);
    },
    async leaseMoved(_fence: number, _expiresAt: number): Promise<void> {},
    async released(_fence: number): Promise<void> {},
    async waiterCount(): Promise<number> {
      return 0;
    },
  };
}
