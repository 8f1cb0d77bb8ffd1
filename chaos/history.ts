/**
 * What clients did, Jepsen-style: every operation with the time it was
 * invoked and the time it completed (the suite's monotonic clock, one
 * process), and what it answered. The checker reads only this and the
 * resource's log.
 */
export type Outcome =
  | {
      kind: "granted";
      token: string;
      fence: number;
      ttlMs: number;
      expiresAt: number;
      /**
       * When the lease began in store time, where that is not expiresAt - ttlMs: a quorum's
       * expiresAt is the acquire's start plus its validity (shorter than ttlMs, by the time the
       * majority took and a drift), so its lease counts from the grant's answer, by the caller's
       * clock, which the quorum's times are in.
       */
      storeStart?: number;
    }
  | { kind: "ok"; expiresAt?: number; ttlMs?: number }
  | { kind: "busy" }
  | { kind: "lost" }
  /**
   * The store granted, but a resource refused the grant's claim (it had seen a higher fence):
   * the grant was given back and its holder never held (claim on grant).
   */
  | { kind: "claimRefused"; fence: number }
  /** 503: the store did not answer (or a majority did not). */
  | { kind: "unavailable" }
  /** Anything else: a connection refused (the Worker restarting), a 5xx, a bug. */
  | { kind: "error"; message: string }
  /** No answer within the suite's bound for one request. */
  | { kind: "hung" };

export interface Op {
  client: number;
  op: "acquire" | "heartbeat" | "release";
  /** The token the operation is about (acquire: the one it got). */
  token?: string;
  invokedAt: number;
  completedAt: number;
  outcome: Outcome;
}

export class History {
  readonly ops: Op[] = [];

  record(op: Op): void {
    this.ops.push(op);
  }
}
