/**
 * How a lease watched for onExpire stands, as its lock object asks at the
 * lease's end: still held (and for how long, as a remaining time), ended on
 * purpose (released, completed, failed: no notification), or lapsed.
 */
export type WatchState = { state: "held"; remainingMs: number; expiresAt: number } | { state: "ended" } | { state: "lapsed" };

/** Which lease a watch is for: its fence, and its holder's token where a kind has many holders (readers share a fence). */
export interface WatchedLeaseId {
  fence: number;
  token?: string;
}
