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

/**
 * Short timers on one setTimeout, earliest first (a binary heap; a cancelled
 * timer stays in it, marked, until its time). An object may have only
 * 10,000 pending setTimeouts at once (workerd's quota): a line of 10,000
 * waiters, each with its deadline and its socket's idle limit, would run out
 * with one apiece, and the next timer would throw.
 */
export class SharedTimers implements ObjectTimers {
  private readonly heap: Array<{ at: number; seq: number; fn: () => void; cancelled: boolean }> = [];
  private seq = 0;
  private armed: { at: number; handle: ReturnType<typeof setTimeout> } | undefined;

  after(ms: number, fn: () => void): () => void {
    const timer = { at: Date.now() + ms, seq: ++this.seq, fn, cancelled: false };
    this.push(timer);
    this.arm();
    return () => {
      timer.cancelled = true;
      this.dropCancelledHead();
    };
  }

  /** Cancelled timers at the front go now, so the one setTimeout waits only for a live timer (or none: the object may hibernate). */
  private dropCancelledHead(): void {
    if (!this.heap[0]?.cancelled) return;
    while (this.heap[0]?.cancelled) this.pop();
    if (this.armed) clearTimeout(this.armed.handle);
    this.armed = undefined;
    this.arm();
  }

  /** How many are waiting (cancelled ones included, until their time). */
  get size(): number {
    return this.heap.length;
  }

  private arm(): void {
    const next = this.heap[0];
    if (!next || (this.armed && this.armed.at <= next.at)) return;
    // A later one set first: the earlier takes the one setTimeout.
    if (this.armed) clearTimeout(this.armed.handle);
    this.armed = { at: next.at, handle: setTimeout(() => this.fire(), Math.max(0, next.at - Date.now())) };
  }

  private fire(): void {
    this.armed = undefined;
    const now = Date.now();
    // In order of time, then of setting: what is due now runs, each after the ones set before it.
    while (this.heap.length && this.heap[0].at <= now) {
      const timer = this.pop();
      if (!timer.cancelled) timer.fn();
    }
    this.arm();
  }

  private before(a: { at: number; seq: number }, b: { at: number; seq: number }): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(timer: SharedTimers["heap"][number]): void {
    const heap = this.heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  private pop(): SharedTimers["heap"][number] {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop() as SharedTimers["heap"][number];
    if (heap.length) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let least = i;
        if (l < heap.length && this.before(heap[l], heap[least])) least = l;
        if (r < heap.length && this.before(heap[r], heap[least])) least = r;
        if (least === i) break;
        [heap[i], heap[least]] = [heap[least], heap[i]];
        i = least;
      }
    }
    return top;
  }
}

export class AlarmTimers implements ObjectTimers {
  private readonly pending = new Map<number, { at: number; fn: () => void }>();
  private lastId = 0;
  /** The short ones: one setTimeout for all (SharedTimers). */
  private readonly short = new SharedTimers();

  /** @param wake  makes sure the object's alarm fires no later than `at` */
  constructor(private readonly wake: (at: number) => void) {}

  after(ms: number, fn: () => void): () => void {
    if (ms <= SHORT_TIMER_MS) return this.short.after(ms, fn);
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
