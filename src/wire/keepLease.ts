import { LeaseLostError } from "../errors.js";

export interface LeaseKeeper {
  /** Fires when the lease is lost, or may be (no heartbeat got through before the local deadline). */
  readonly signal: AbortSignal;
  /** A heartbeat sent at `sentAt` (local time) was confirmed elsewhere (a manual one): the deadline moves. */
  confirmed(sentAt: number): void;
  /** The lease was lost, as someone else learned (a manual heartbeat answered lost). */
  lost(): void;
  stop(): void;
}

/** Why a kept lease's signal aborted: the store said so, or no heartbeat was confirmed in time. */
type LossKind = "lost" | "deadline";

/**
 * The clock leases are kept by: monotonic, so an NTP step of the wall clock
 * can neither stretch nor shorten a deadline. Every `since` and `sentAt`
 * handed to keepLease comes from it.
 */
export const leaseClock = (): number => performance.now();

export interface KeepLeaseOptions {
  ttlMs: number;
  /** leaseClock() when the begin or acquire was sent. */
  since: number;
  /** One heartbeat; `signal` aborts it when the lease is stopped or lost. */
  heartbeat: (signal: AbortSignal) => Promise<"ok" | "lost">;
  /**
   * Abort this long before the local deadline (default 0): room for the
   * holder to stop its work, and for clock rate drift, before anyone else
   * can hold the lease.
   */
  marginMs?: number;
  /** The abort reason (default: the library's LeaseLostError). */
  lostError?: (kind: LossKind, message: string) => Error;
}

const MESSAGES: Record<LossKind, string> = {
  lost: "the store says this token no longer holds the lease",
  deadline: "no heartbeat was confirmed before the lease's local deadline: it may have been lost",
};

/**
 * Heartbeats a lease every ttlMs/3 while work runs, one heartbeat at a time,
 * and sooner when the local deadline is near: a tick comes at most halfway
 * to the deadline, so a grant that took long to arrive (a wait) or a
 * heartbeat that failed is followed by another try in time. The store
 * saying "lost" aborts the signal at once. Once the local deadline passes
 * without a confirmed heartbeat, the signal aborts too: the holder must
 * assume the worst. The local deadline counts from when a request was sent,
 * which is never later than the store's own now, so it comes before the
 * store's end of the lease (less the margin, earlier still).
 */
export function keepLease(options: KeepLeaseOptions): LeaseKeeper {
  const controller = new AbortController();
  const interval = Math.max(1, Math.floor(options.ttlMs / 3));
  const margin = options.marginMs ?? 0;
  const lostError = options.lostError ?? ((_kind: LossKind, message: string) => new LeaseLostError(message));
  let stopped = false;
  let tickTimer: ReturnType<typeof setTimeout> | undefined;
  let deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  let deadline = 0;
  const inFlight = new AbortController();

  const stop = () => {
    stopped = true;
    clearTimeout(tickTimer);
    clearTimeout(deadlineTimer);
    inFlight.abort(); // a heartbeat still retrying must not outlive the lease's keeping
  };
  const lose = (kind: LossKind) => {
    if (!controller.signal.aborted) controller.abort(lostError(kind, MESSAGES[kind]));
    stop();
  };
  const armDeadline = (sentAt: number) => {
    const next = sentAt + options.ttlMs - margin;
    if (stopped || next <= deadline) return; // an older heartbeat confirmed late moves nothing
    deadline = next;
    clearTimeout(deadlineTimer);
    deadlineTimer = setTimeout(() => lose("deadline"), Math.max(0, deadline - leaseClock()));
  };
  /** Every third of the ttl, or halfway to the deadline when that comes first. */
  const scheduleTick = () => {
    if (!stopped) tickTimer = setTimeout(tick, Math.max(1, Math.min(interval, (deadline - leaseClock()) / 2)));
  };
  const tick = async () => {
    if (stopped) return;
    const sentAt = leaseClock();
    try {
      const r = await options.heartbeat(inFlight.signal);
      if (stopped) return;
      if (r === "lost") return lose("lost");
      armDeadline(sentAt);
    } catch {
      // Tried again soon; the deadline timer decides when to give up.
    }
    scheduleTick();
  };

  armDeadline(options.since);
  scheduleTick();
  return { signal: controller.signal, confirmed: armDeadline, lost: () => lose("lost"), stop };
}
