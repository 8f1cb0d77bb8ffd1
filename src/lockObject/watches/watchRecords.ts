import type { KindName } from "../../store/kinds.js";
import type { StoreKind } from "../line/waitProtocol.js";

/** What a lock object stores for onExpire: its watched leases and their undelivered notifications (watches.ts keeps them). */

/** A lease whose lapse (end without release) is reported to onExpire. */
export interface WatchedLease {
  kind: KindName;
  /** The store the lease lives in (its kind only; the object has the credentials). */
  store: StoreKind;
  ns: string;
  name: string;
  fence: number;
  /** The holder's token, for the kinds with many holders (readers share a fence): the watch's id then. */
  token?: string;
  /** When to look again, on this object's clock. */
  checkAt: number;
  /** The lease's end as the store answered it (the notification's expiredAt). */
  expiresAt: number;
  onExpire: string;
  /** The holder's label, when it gave one (the notification's holderLabel). */
  holderLabel?: string;
}

/** A watch's id: the holder's token where a kind has many holders, else the fence. */
export const watchIdOf = (lease: { fence: number; token?: string }): string => lease.token ?? String(lease.fence);

/** A notification not yet acknowledged by its receiver. */
export interface PendingNotification {
  url: string;
  /** The namespace, whose key signs it (absent only in notifications stored before namespaces signed). */
  ns?: string;
  body: string;
  fence: number;
  attempts: number;
  nextAt: number;
}
