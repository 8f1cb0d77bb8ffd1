import type { KindName } from "../../store/kinds.js";
import type { LockRef, LockStore } from "../../store/types.js";
import type { KindSocketAnswer } from "../../wire/socketProtocol.js";
import type { KindObjectPart } from "../KindObjectPart.js";
import type { ObjectTimers } from "../timers.js";
import type { StoreKind, WaitOptions, WaitOutcome, WaitRequest } from "./waitProtocol.js";
import { waitFault } from "./waitFault.js";
import { LineOrder } from "./LineOrder.js";
import { InternalError } from "../../errors.js";

/** A lease granted with onExpire, as the line hands it to the object (its fence, and its token where holders share a fence). */
export interface GrantedLease {
  kind: KindName;
  store: StoreKind;
  ref: LockRef;
  fence: number;
  token?: string;
  expiresAt: number;
  ttlMs: number;
  onExpire: string;
  /** The holder's label, carried in the notification. */
  holderLabel?: string;
}

/** What the line needs of its lock object. */
export interface LineHost {
  storeOf(kind: StoreKind): LockStore;
  timers: ObjectTimers;
  /** A waiter joined or left: the waiters count a watch socket sees moved. */
  changed(): void;
  /** Keep a granted lease's expiry (onExpire). */
  keepExpiry(lease: GrantedLease): void;
  /** A lease ended on purpose: its expiry is dropped, with no notification. */
  dropExpiry(id: number | string): void;
}

/** An awaited end's wait ran out first: the core's own answer (socketMessages.ts). */
type Timeout = { type: "timeout"; retryAfterMs: number };

/** Never look at an awaited state again sooner than this (no spinning on a lease about to end). */
const MIN_LOOK_AGAIN_MS = 10;

/**
 * The lock object's line for its one kind: the core owns it and the kind
 * answers its hooks (KindObjectPart). A wait tries once (a try-lock, a
 * re-entry, a kind with no line) or queues (LineOrder: order, timeouts,
 * pickups, store faults); a wait for a state's end (a kind with an ending)
 * looks again at every write noted here and when the state would end by
 * itself; a granted lease's expiry is kept for onExpire; a write noted here
 * drops expiries, moves the line and wakes the awaited ends; a grant is
 * picked up or taken back here.
 */
export class Line {
  private queue: LineOrder<unknown, unknown> | undefined;
  /** The store of the requests this object serves now (waiters of one lock all use the same). */
  private storeKind: StoreKind = "durable";
  /** Waits for a state's end that have looked at it once (awaitEnd): what a lock's waiters are to its line. */
  private awaiting = 0;
  /** Wakes the awaited ends at the next write noted here: they look again. */
  private wake!: () => void;
  private nextWrite: Promise<void> = this.renewWake();

  constructor(
    private readonly kind: KindName,
    private readonly part: KindObjectPart,
    private readonly host: LineHost,
  ) {}

  /** The lock's waiters: in its line, or awaiting a state's end (a kind with no line). */
  get count(): number {
    return this.queue?.length ?? this.awaiting;
  }

  private queueFor(ref: LockRef, store: StoreKind): LineOrder<unknown, unknown> | undefined {
    this.storeKind = store;
    const policy = this.part.line?.policy;
    if (!policy) return undefined;
    this.queue ??= new LineOrder(policy, {
      store: () => this.host.storeOf(this.storeKind),
      ref,
      timers: this.host.timers,
      changed: () => this.host.changed(),
    });
    return this.queue;
  }

  /** Waits in line (waitMs > 0), or tries once (a try-lock, a re-entry, a kind with no line), with its expiry kept; never ahead of the line. */
  async wait(req: WaitRequest, signal: AbortSignal, options?: WaitOptions): Promise<WaitOutcome<unknown>> {
    const { ref, store, waitMs } = req;
    try {
      const queue = this.queueFor(ref, store);
      const reentry = req.token !== undefined;
      let outcome: WaitOutcome<unknown>;
      if (!queue || reentry || waitMs === 0) {
        if (queue && !reentry && queue.length) return { status: "locked", retryAfterMs: 100 };
        if (!this.part.tryOnce) throw new InternalError(`the ${this.kind} takes no request to its lock object`);
        outcome = await this.part.tryOnce(this.host.storeOf(store), req);
      } else {
        outcome = await queue.wait(req, waitMs, signal, options);
      }
      if (outcome.status === "granted") this.keepExpiry(req, outcome.grant);
      return outcome;
    } catch (err) {
      return waitFault(`lock object ${this.kind} wait`, err);
    }
  }

  /**
   * A wait for the state's end (a kind with an ending: an idempotency key's
   * run): the kind's answer once it ended, or timeout. It looks now, at each
   * write noted here, and when the state would end by itself (an owner that
   * vanished sends no note).
   */
  async awaitEnd(ref: LockRef, store: StoreKind, waitMs: number, signal: AbortSignal): Promise<KindSocketAnswer | Timeout> {
    const ending = this.part.ending;
    if (!ending) throw new InternalError(`the ${this.kind} awaits no end`);
    this.storeKind = store;
    const deadline = Date.now() + waitMs;
    const gone = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    let counted = false;
    try {
      for (;;) {
        const nextWrite = this.nextWrite; // taken before looking, so a write noted meanwhile is not missed
        const look = await ending.look(this.host.storeOf(store), ref);
        if ("ended" in look) return look.ended;
        if (!counted) this.awaiting += 1;
        counted = true;
        const left = deadline - Date.now();
        // The end is on the store's clock; looking again a little late or early is harmless.
        const retryAfterMs = Math.max(1, look.endsInMs);
        if (left <= 0 || signal.aborted) return { type: "timeout", retryAfterMs };
        let cancel: (() => void) | undefined;
        const lapse = new Promise<void>((resolve) => {
          cancel = this.host.timers.after(Math.min(left, Math.max(MIN_LOOK_AGAIN_MS, retryAfterMs + MIN_LOOK_AGAIN_MS)), resolve);
        });
        await Promise.race([nextWrite, lapse, gone]);
        cancel?.();
      }
    } finally {
      if (counted) this.awaiting -= 1;
    }
  }

  /** A granted lease asked with onExpire: its expiry is kept from now. */
  private keepExpiry(req: WaitRequest, grant: unknown): void {
    const { ref, store, onExpire, holder } = req;
    const lease = onExpire === undefined ? undefined : this.part.expiryOf?.(grant);
    if (!onExpire || !lease) return;
    this.host.keepExpiry({ kind: this.kind, store, ref, ...lease, onExpire, ...(holder === undefined ? {} : { holderLabel: holder }) });
  }

  /** A write in Redis (the Worker's note) or here (the Durable store's own operation): expiries dropped, the line moves, awaited ends look again. */
  noteWrite(note: unknown, store: StoreKind): void {
    const wake = this.wake;
    this.nextWrite = this.renewWake();
    wake();
    const effect = this.part.noteWrite?.(note);
    if (!effect) return;
    for (const id of effect.endedExpiries) this.host.dropExpiry(id);
    const { ref } = note as { ref?: LockRef };
    const queue = ref ? this.queueFor(ref, store) : this.queue;
    if (!queue) return;
    if (effect.handedTo) queue.handedOver(effect.handedTo.token, effect.handedTo.grant);
    else if (effect.next === "always") queue.letHeadTry(true);
    else if (effect.next === "ifWaiting" && queue.length) queue.letHeadTry();
  }

  private renewWake(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  /** A grant from the line reached its holder: its answer was delivered, or it heartbeated. */
  pickedUp(token: string): void {
    this.queue?.pickedUp(token);
  }

  /** A grant from the line whose client left before acknowledging it: back to the line at once. */
  takeBack(token: string): void {
    this.queue?.takeBack(token);
  }

  /** Whether that grant was already taken back (its acknowledgement came too late). */
  wasTakenBack(token: string): boolean {
    return this.queue?.wasTakenBack(token) ?? false;
  }
}
