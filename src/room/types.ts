import type { StoreConfig } from "../store/storeConfig";
import type { MutexGrant } from "../store/types";

/** What the Worker asks of a LockRoom. */
export interface WaitRequest {
  store: StoreConfig;
  ns: string;
  name: string;
  ttlMs: number;
  waitMs: number;
  onExpire?: string;
}

export type WaitOutcome =
  | { status: "granted"; grant: MutexGrant }
  | { status: "timeout"; retryAfterMs: number }
  | { status: "error"; message: string };

/** A lease whose lapse (end without release) is reported to onExpire. */
export interface WatchedLease {
  kind: "mutex" | "idempotency";
  ns: string;
  name: string;
  fence: number;
  expiresAt: number;
  onExpire: string;
  store: StoreConfig;
}

/** A notification not yet acknowledged by its receiver. */
export interface PendingNotification {
  url: string;
  body: string;
  fence: number;
  attempts: number;
  nextAt: number;
}
