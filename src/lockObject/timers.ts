/**
 * Timers for a lock object that can hibernate. Cloudflare hibernates an
 * object (drops it from memory, keeping its WebSockets open) only when no
 * setTimeout is pending, after 10 s without events; a hibernated object is
 * woken by its alarm. So a short timer is a setTimeout (it ends before
 * hibernation could start), and a long one (a socket waiter's deadline, the
 * wake-up at a holder's lease end) is kept here and wakes the object by its
 * storage alarm (LockObject.alarm runs what is due). Kept in memory, a long
 * timer is lost with the object; what it was for is rebuilt when the object
 * wakes (WaitSockets.restore), so losing it loses nothing.
 */
export interface ObjectTimers {
  /** Runs fn in ms; the answer cancels it. */
  after(ms: number, fn: () => void): () => void;
}

/** Plain setTimeout timers (an object that is never left to hibernate, a test). */
export const memoryTimers: ObjectTimers = {
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

/** Timers up to this long are setTimeouts: the object cannot hibernate before they end anyway. */
export const SHORT_TIMER_MS = 10_000;

export class AlarmTimers implements ObjectTimers {
  private readonly pending = new Map<number, { at: number; fn: () => void }>();
  private lastId = 0;

  /** @param wake  makes sure the object's alarm fires no later than `at` */
  constructor(private readonly wake: (at: number) => void) {}

  after(ms: number, fn: () => void): () => void {
    if (ms <= SHORT_TIMER_MS) return memoryTimers.after(ms, fn);
    const id = ++this.lastId;
    const at = Date.now() + ms;
    this.pending.set(id, { at, fn });
    this.wake(at);
    return () => this.pending.delete(id);
  }

  /** When the next long timer is due. */
  next(): number | undefined {
    let next: number | undefined;
    for (const { at } of this.pending.values()) if (next === undefined || at < next) next = at;
    return next;
  }

  /** From the alarm: runs every long timer due by `now` (a short remainder goes back to setTimeout). */
  runDue(now: number): void {
    for (const [id, t] of [...this.pending]) {
      if (t.at > now + 5) continue;
      this.pending.delete(id);
      t.fn();
    }
  }
}
