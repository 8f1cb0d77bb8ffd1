import type { KindName } from "../../store/kinds.js";
import type { LockRef, LockStore } from "../../store/types.js";
import type { KindObjectPart } from "../KindObjectPart.js";
import type { ObjectTimers } from "../timers.js";
import type { GrantedLease } from "../watches/watches.js";
import type { StoreKind, WaitOutcome, WaitRequest } from "./waitProtocol.js";
import { waitFault } from "./waitFault.js";
import { type WaitOptions, LineOrder } from "./LineOrder.js";

/** What the line needs of its lock object. */
export interface LineHost {
  storeOf(kind: StoreKind): LockStore;
  timers: ObjectTimers;
  /** A waiter joined or left: the waiters count a watcher sees moved. */
  changed(): void;
  /** Watch a granted lease for onExpire. */
  watchLease(lease: GrantedLease): void;
  /** A lease ended on purpose: its watch ends with no notification. */
  dropWatch(id: number | string): void;
}

/**
 * The lock object's line for its one kind: the core owns it and the kind
 * answers its hooks (KindObjectPart). A wait tries once (a try-lock, a
 * re-entry, a kind with no line) or queues (LineOrder: order, timeouts,
 * pickups, store faults); a granted lease is watched for onExpire; a write
 * noted here ends watches and moves the line; a grant is picked up or taken
 * back here.
 */
export class Line {
  private queue: LineOrder<unknown, unknown> | undefined;
  /** The store of the requests this object serves now (waiters of one lock all use the same). */
  private storeKind: StoreKind = "durable";

  constructor(
    private readonly kind: KindName,
    private readonly part: KindObjectPart,
    private readonly host: LineHost,
  ) {}

  /** The lock's waiters: in its line, or awaiting a run's end (a kind with no line). */
  get count(): number {
    return this.queue?.length ?? this.part.awaiting ?? 0;
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

  /** Waits in line (waitMs > 0), or tries once (a try-lock, a re-entry, a kind with no line), with a watch; never ahead of the line. */
  async wait(req: WaitRequest, signal: AbortSignal, options?: WaitOptions): Promise<WaitOutcome<unknown>> {
    const { ref, store, waitMs } = req;
    try {
      const queue = this.queueFor(ref, store);
      const reentry = this.part.line?.isReentry(req) ?? false;
      let outcome: WaitOutcome<unknown>;
      if (!queue || reentry || waitMs === 0) {
        if (queue && !reentry && queue.length) return { status: "locked", retryAfterMs: 100 };
        outcome = await this.part.tryOnce(this.host.storeOf(store), req);
      } else {
        outcome = await queue.wait(this.part.line?.queued(req), waitMs, signal, options);
      }
      if (outcome.status === "granted") this.watch(req, outcome.grant);
      return outcome;
    } catch (err) {
      return waitFault(`lock object ${this.kind} wait`, err);
    }
  }

  /** A granted lease asked for onExpire is watched from now. */
  private watch(req: WaitRequest, grant: unknown): void {
    const { ref, store, onExpire, holder } = req;
    const lease = onExpire === undefined ? undefined : this.part.watchOf(grant);
    if (!onExpire || !lease) return;
    this.host.watchLease({ kind: this.kind, store, ref, ...lease, onExpire, ...(holder === undefined ? {} : { holderLabel: holder }) });
  }

  /** A write in Redis (the Worker's note) or here (the Durable store's own operation): its watches end, the line moves. */
  noteWrite(note: unknown, store: StoreKind): void {
    const effect = this.part.noteWrite(note);
    for (const id of effect.endedWatches) this.host.dropWatch(id);
    const { ref } = note as { ref?: LockRef };
    const queue = ref ? this.queueFor(ref, store) : this.queue;
    if (!queue) return;
    if (effect.handedTo) queue.handedOver(effect.handedTo.token, effect.handedTo.grant);
    else if (effect.next === "always") queue.letHeadTry(true);
    else if (effect.next === "ifWaiting" && queue.length) queue.letHeadTry();
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
