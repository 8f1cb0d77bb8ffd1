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

/** A timer in a heap: when, the order it was set in (ties run in that order), what it runs, and whether it was cancelled. */
type HeapTimer = { at: number; seq: number; fn: () => void; cancelled: boolean };

/** Timers earliest first (then in the order set): a binary heap, so the next one is found without looking at the rest. */
class TimerHeap {
  readonly items: HeapTimer[] = [];

  get top(): HeapTimer | undefined {
    return this.items[0];
  }

  push(timer: HeapTimer): void {
    const heap = this.items;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  pop(): HeapTimer {
    const heap = this.items;
    const top = heap[0];
    const last = heap.pop() as HeapTimer;
    if (heap.length) {
      heap[0] = last;
      this.sink(0);
    }
    return top;
  }

  /** Drops every cancelled timer at once (a heap built again from the rest). */
  compact(): void {
    const live = this.items.filter((t) => !t.cancelled);
    this.items.length = 0;
    this.items.push(...live);
    for (let i = (live.length >> 1) - 1; i >= 0; i--) this.sink(i);
  }

  private sink(from: number): void {
    const heap = this.items;
    let i = from;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < heap.length && before(heap[l], heap[least])) least = l;
      if (r < heap.length && before(heap[r], heap[least])) least = r;
      if (least === i) break;
      [heap[i], heap[least]] = [heap[least], heap[i]];
      i = least;
    }
  }
}

const before = (a: HeapTimer, b: HeapTimer): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/**
 * Short timers on one setTimeout, earliest first (a binary heap; a cancelled
 * timer stays in it, marked, until its time). An object may have only
 * 10,000 pending setTimeouts at once (workerd's quota): a line of 10,000
 * waiters, each with its deadline and its socket's idle limit, would run out
 * with one apiece, and the next timer would throw.
 */
export class SharedTimers implements ObjectTimers {
  private readonly heap = new TimerHeap();
  private seq = 0;
  private armed: { at: number; handle: ReturnType<typeof setTimeout> } | undefined;

  after(ms: number, fn: () => void): () => void {
    const timer = { at: Date.now() + ms, seq: ++this.seq, fn, cancelled: false };
    this.heap.push(timer);
    this.arm();
    return () => {
      timer.cancelled = true;
      this.dropCancelledHead();
    };
  }

  /** Cancelled timers at the front go now, so the one setTimeout waits only for a live timer (or none: the object may hibernate). */
  private dropCancelledHead(): void {
    if (!this.heap.top?.cancelled) return;
    while (this.heap.top?.cancelled) this.heap.pop();
    if (this.armed) clearTimeout(this.armed.handle);
    this.armed = undefined;
    this.arm();
  }

  /** How many are waiting (cancelled ones included, until their time). */
  get size(): number {
    return this.heap.items.length;
  }

  private arm(): void {
    const next = this.heap.top;
    if (!next || (this.armed && this.armed.at <= next.at)) return;
    // A later one set first: the earlier takes the one setTimeout.
    if (this.armed) clearTimeout(this.armed.handle);
    this.armed = { at: next.at, handle: setTimeout(() => this.fire(), Math.max(0, next.at - Date.now())) };
  }

  private fire(): void {
    this.armed = undefined;
    const now = Date.now();
    // In order of time, then of setting: what is due now runs, each after the ones set before it.
    while (this.heap.top && this.heap.top.at <= now) {
      const timer = this.heap.pop();
      if (!timer.cancelled) timer.fn();
    }
    this.arm();
  }
}

/**
 * Long timers, run from the alarm. In a heap too: the object asks for the
 * next one (LockObject.schedule) several times per handoff, and a line of
 * 10,000 socket waiters has a deadline each, so a scan of them all made a
 * handoff's cost grow with the line (bench section 9). A cancelled timer is
 * marked and dropped when it reaches the front, or all at once when the
 * cancelled ones outnumber the rest (a holder's lease-end wake-up is set
 * again on every handoff).
 */
export class AlarmTimers implements ObjectTimers {
  private readonly pending = new TimerHeap();
  private seq = 0;
  private cancelled = 0;
  /** The short ones: one setTimeout for all (SharedTimers). */
  private readonly short = new SharedTimers();

  /** @param wake  makes sure the object's alarm fires no later than `at` */
  constructor(private readonly wake: (at: number) => void) {}

  after(ms: number, fn: () => void): () => void {
    if (ms <= SHORT_TIMER_MS) return this.short.after(ms, fn);
    const timer = { at: Date.now() + ms, seq: ++this.seq, fn, cancelled: false };
    this.pending.push(timer);
    this.wake(timer.at);
    return () => {
      if (timer.cancelled) return;
      timer.cancelled = true;
      if (++this.cancelled > 64 && this.cancelled * 2 > this.pending.items.length) {
        this.pending.compact();
        this.cancelled = 0;
      }
    };
  }

  /** When the next long timer is due. */
  next(): number | undefined {
    this.dropCancelledHead();
    return this.pending.top?.at;
  }

  /** From the alarm: runs every long timer due by `now`, earliest first (a short remainder goes back to setTimeout). */
  runDue(now: number): void {
    for (let t = this.pending.top; t && t.at <= now + 5; t = this.pending.top) {
      this.pending.pop();
      if (t.cancelled) this.cancelled--;
      else {
        t.cancelled = true; // run once: its cancel, called later, is a no-op
        t.fn();
      }
    }
  }

  private dropCancelledHead(): void {
    while (this.pending.top?.cancelled) {
      this.pending.pop();
      this.cancelled--;
    }
  }
}
