import { LeaseLostError } from "../errors.js";

export interface LeaseKeeper {
  /** Fires when the lease is lost, or may be (no heartbeat got through before the local deadline). */
  readonly signal: AbortSignal;
  stop(): void;
}

/**
 * Heartbeats a lease every ttlMs/3 while work runs, one heartbeat at a time.
 * The store saying "lost" aborts the signal at once. A heartbeat that fails
 * (store unreachable) is retried on the next tick, but once the lease's
 * local deadline passes without one getting through, the signal aborts too:
 * the holder must assume the worst. The local deadline counts from when a
 * request was sent, which is never later than the store's own now.
 */
export function keepLease(options: {
  ttlMs: number;
  /** Local time at which the begin or acquire was sent. */
  since: number;
  heartbeat: () => Promise<"ok" | "lost">;
}): LeaseKeeper {
  const controller = new AbortController();
  const interval = Math.max(1, Math.floor(options.ttlMs / 3));
  let stopped = false;
  let tickTimer: ReturnType<typeof setTimeout> | undefined;
  let deadlineTimer: ReturnType<typeof setTimeout> | undefined;

  const stop = () => {
    stopped = true;
    clearTimeout(tickTimer);
    clearTimeout(deadlineTimer);
  };
  const lose = (message: string) => {
    if (!controller.signal.aborted) controller.abort(new LeaseLostError(message));
    stop();
  };
  const armDeadline = (sentAt: number) => {
    clearTimeout(deadlineTimer);
    deadlineTimer = setTimeout(
      () => lose("no heartbeat reached the store before the lease's deadline"),
      Math.max(0, sentAt + options.ttlMs - Date.now()),
    );
  };
  const tick = async () => {
    if (stopped) return;
    const sentAt = Date.now();
    try {
      const r = await options.heartbeat();
      if (stopped) return;
      if (r === "lost") return lose("the store says this token no longer holds the lease");
      armDeadline(sentAt);
    } catch {
      // Retried next tick; the deadline timer decides when to give up.
    }
    if (!stopped) tickTimer = setTimeout(tick, interval);
  };

  armDeadline(options.since);
  tickTimer = setTimeout(tick, interval);
  return { signal: controller.signal, stop };
}
