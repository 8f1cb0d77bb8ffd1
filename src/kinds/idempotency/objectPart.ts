import { IDEMPOTENCY } from "./types.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import type { KindObjectPart, WriteEffect } from "../../lockObject/KindObjectPart.js";
import type { StoreKind, WaitOutcome } from "../../lockObject/line/waitProtocol.js";
import { kindOps, type LockStore } from "../../store/types.js";
import { newOwnerToken, newRequestId } from "../../tokens.js";
import type { LockRef } from "../../store/types.js";
import type { SocketAnswer } from "../../wire/socketProtocol.js";
import type { IdempotencyBeginResult, IdempotencyWriteNote, IdempotencyOps, IdempotencyState } from "./types.js";
import type { IdempotencyWait } from "./wait.js";

/** How an idempotency wait ends: the key completed or free (IdempotencyState), or not within waitMs. */
type KeyWaitEnd = Exclude<IdempotencyState, { state: "started" }> | { state: "timeout"; retryAfterMs: number };

/** Never look at a key again sooner than this (no spinning on a lease about to end). */
const MIN_LOOK_AGAIN_MS = 10;

/**
 * An idempotency key's part of its lock object: a begin that asked for
 * onExpire (begun and watched in one step), and on the Durable store the
 * operations themselves; completing or failing ends the watch quietly and
 * wakes callers waiting for the run's end (awaitEnd, from a wait socket).
 * Keys have no line: nobody is granted anything from one.
 */
export class IdempotencyObjectPart implements KindObjectPart<typeof IDEMPOTENCY, IdempotencyBeginResult> {
  readonly durableOps: IdempotencyOps;
  /** Callers waiting here for the run's end (awaitEnd), counted once they have looked at the key. */
  private waiting = 0;

  constructor(private readonly host: LockObjectHost) {
    const own = kindOps(host.ownStore, IDEMPOTENCY);
    this.durableOps = {
      ...own,
      complete: async (ref, input) => {
        const r = await own.complete(ref, input);
        if (r.status === "ok") host.noteWrite({ fence: r.fence }, "durable");
        return r;
      },
      fail: async (ref, input) => {
        const r = await own.fail(ref, input);
        if (r.status === "ok") host.noteWrite({ fence: r.fence }, "durable");
        return r;
      },
    };
  }

  /** A begin with onExpire: begun here, and watched (by the core) when it started the work. */
  async tryOnce(store: LockStore, req: IdempotencyWait): Promise<WaitOutcome<IdempotencyBeginResult>> {
    const r = await kindOps(store, IDEMPOTENCY).begin(req.ref, {
      token: req.newToken ?? newOwnerToken(),
      ttlMs: req.ttlMs,
      retainMs: req.retainMs,
      fingerprint: req.fingerprint,
      requestId: req.requestId ?? newRequestId(),
      holder: req.holder,
    });
    return { status: "granted", grant: r, pickup: false };
  }

  watchOf(r: IdempotencyBeginResult) {
    return r.status === "started" ? { fence: r.fence, expiresAt: r.expiresAt, ttlMs: r.ttlMs } : undefined;
  }

  /** Given up or finished on purpose (Redis store: told by the Worker): the watch ends with no notification. */
  noteWrite(note: IdempotencyWriteNote): WriteEffect {
    // Callers waiting for the run's end look again.
    const wake = this.wakeWaiters;
    this.nextEnd = new Promise((resolve) => (this.wakeWaiters = resolve));
    wake();
    return { endedWatches: [note.fence] };
  }

  /** Resolves at the next note of a complete or fail: callers waiting on a wait socket look again then. */
  private wakeWaiters!: () => void;
  private nextEnd: Promise<void> = new Promise((resolve) => (this.wakeWaiters = resolve));

  /**
   * A caller of a key someone else is working on waits here (a wait
   * socket) for the run to end: the stored result once completed, `absent`
   * once failed or lapsed (then the caller may begin it), or timeout. It
   * looks at the key now, at each note of a complete or fail, and when the
   * running owner's lease would end (an owner that vanished sends no note).
   * Each look marks the run as waited for (inspectWaiting), so that on the
   * Redis store its complete is told here however the caller learned of the
   * run: a begin answered in_progress marks it too, but a caller may watch
   * without one.
   */
  async awaitEnd(ref: LockRef, store: StoreKind, waitMs: number, signal: AbortSignal): Promise<SocketAnswer> {
    const end = await this.runEnd(ref, store, waitMs, signal);
    if (end.state === "completed") return { type: "completed", response: end.response, completedAt: end.completedAt, fence: end.fence };
    if (end.state === "absent") return { type: "free" };
    return { type: "timeout", retryAfterMs: end.retryAfterMs };
  }

  private async runEnd(ref: LockRef, store: StoreKind, waitMs: number, signal: AbortSignal): Promise<KeyWaitEnd> {
    const deadline = Date.now() + waitMs;
    const gone = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    let counted = false;
    try {
      for (;;) {
        const nextEnd = this.nextEnd; // taken before looking, so an end noted meanwhile is not missed
        const state = await kindOps(this.host.storeOf(store), IDEMPOTENCY).inspectWaiting(ref);
        if (state.state !== "started") return state;
        if (!counted) this.waiting += 1;
        counted = true;
        const left = deadline - Date.now();
        // The lease's end is on the store's clock; looking again a little late or early is harmless.
        const retryAfterMs = Math.max(1, state.expiresAt - Date.now());
        if (left <= 0 || signal.aborted) return { state: "timeout", retryAfterMs };
        let cancel: (() => void) | undefined;
        const lapse = new Promise<void>((resolve) => {
          cancel = this.host.timers.after(Math.min(left, Math.max(MIN_LOOK_AGAIN_MS, retryAfterMs + MIN_LOOK_AGAIN_MS)), resolve);
        });
        await Promise.race([nextEnd, lapse, gone]);
        cancel?.();
      }
    } finally {
      if (counted) this.waiting -= 1;
    }
  }

  /** Callers waiting here for a run's end that have looked at the key (awaitEnd): what a lock's waiters are to its line. */
  get awaiting(): number {
    return this.waiting;
  }
}
