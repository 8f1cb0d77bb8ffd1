import type { KindName } from "../../store/kinds.js";
import type { StoreKind } from "../line/waitProtocol.js";

/** What a lock object stores for onExpire: its expiries and their undelivered notifications (expiries.ts keeps them). */

/** A lease whose lapse (end without release) is reported to onExpire. */
export interface Expiry {
  kind: KindName;
  /** The store the lease lives in (its kind only; the object has the credentials). */
  store: StoreKind;
  ns: string;
  name: string;
  fence: number;
  /** The holder's token, for the kinds with many holders (readers share a fence): the expiry's id then. */
  token?: string;
  /** When to look again, on this object's clock. */
  checkAt: number;
  /** The lease's end as the store answered it (the notification's expiredAt). */
  expiresAt: number;
  onExpire: string;
  /** The holder's label, when it gave one (the notification's holderLabel). */
  holderLabel?: string;
}

/** An expiry's id: the holder's token where a kind has many holders, else the fence. */
export const expiryIdOf = (lease: { fence: number; token?: string }): string => lease.token ?? String(lease.fence);

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
