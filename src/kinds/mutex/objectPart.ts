import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import type { HeldAnswer, KindObjectPart } from "../../lockObject/KindObjectPart.js";
import { waitFault } from "../../lockObject/line/waitFault.js";
import type { StoreKind, WaitOutcome } from "../../lockObject/line/waitProtocol.js";
import { type WaitOptions, WaitQueue } from "../../lockObject/line/WaitQueue.js";
import type { LockRef } from "../../store/types.js";
import { kindOps } from "../../store/types.js";
import { newOwnerToken, newRequestId } from "../../tokens.js";
import { type MutexWaitRequest, mutexQueuePolicy } from "./mutexQueuePolicy.js";
import type { MutexAcquireInput, MutexGrant, MutexWriteNote, MutexOps } from "./types.js";
import type { MutexWait } from "./wait.js";

/**
 * The mutex's part of its lock object: the line of waiters, the news of
 * releases, and on the Durable store the operations themselves, with the
 * handoff in the same call.
 */
export class MutexObjectPart implements KindObjectPart<"mutex"> {
  private queue: WaitQueue<MutexWaitRequest, MutexGrant> | undefined;
  /** The store of the requests this object serves now (waiters of one lock all use the same). */
  private storeKind: StoreKind = "durable";
  readonly durableOps: MutexOps;

  constructor(private readonly host: LockObjectHost) {
    const own = host.ownStore.mutex;
    this.durableOps = {
      ...own,
      heartbeat: async (ref, input) => {
        const r = await own.heartbeat(ref, input);
        if (r.status === "ok") this.pickedUp(input.token);
        return r;
      },
      release: async (ref, input) => {
        const r = await own.release(ref, input);
        // The handoff happens in this same call: no second object, no round trip.
        if (r.status === "ok" && r.released) this.released({ ref, fence: r.fence, handedTo: r.handedTo }, "durable");
        return r;
      },
    };
  }

  private line(ref: LockRef, store: StoreKind): WaitQueue<MutexWaitRequest, MutexGrant> {
    this.storeKind = store;
    this.queue ??= new WaitQueue(mutexQueuePolicy, {
      store: () => this.host.storeOf(this.storeKind),
      ref,
      timers: this.host.timers,
      changed: () => this.host.lineChanged?.(),
    });
    return this.queue;
  }

  get waiterCount(): number {
    return this.queue?.length ?? 0;
  }

  /** Waits in line (waitMs > 0), or tries once or re-enters with a watch; never ahead of the line. */
  async wait(req: MutexWait, signal: AbortSignal, options?: WaitOptions): Promise<WaitOutcome<MutexGrant>> {
    const ref = req.ref;
    const watch = req.onExpire !== undefined;
    const watchGrant = (grant: MutexGrant) => {
      if (req.onExpire)
        this.host.watchLease({
          kind: "mutex",
          store: req.store,
          ref,
          fence: grant.fence,
          expiresAt: grant.expiresAt,
          ttlMs: grant.ttlMs,
          onExpire: req.onExpire,
          ...(req.holder === undefined ? {} : { holderLabel: req.holder }),
        });
    };
    try {
      const line = this.line(ref, req.store);
      if (req.token !== undefined || req.waitMs === 0) {
        if (req.token === undefined && line.length) return { status: "locked", retryAfterMs: 100 };
        const input: MutexAcquireInput = {
          token: req.token ?? req.newToken ?? newOwnerToken(),
          mode: req.token !== undefined ? "reenter" : "new",
          ttlMs: req.ttlMs,
          requestId: req.requestId ?? newRequestId(),
          watch,
          holder: req.holder,
          lockDelayMs: req.lockDelayMs,
        };
        const r = await kindOps(this.host.storeOf(req.store), "mutex").acquire(ref, input);
        if (r.status === "lost") return { status: "lost" };
        if (r.status === "busy") return { status: "locked", retryAfterMs: r.retryAfterMs, ...(r.current ? { current: r.current } : {}) };
        watchGrant(r.grant);
        return { status: "granted", grant: r.grant, pickup: false };
      }
      const outcome = await line.wait({ ttlMs: req.ttlMs, watch, holder: req.holder, lockDelayMs: req.lockDelayMs }, req.waitMs, signal, options);
      if (outcome.status === "granted") watchGrant(outcome.grant);
      return outcome;
    } catch (err) {
      return waitFault("lock object wait", err);
    }
  }

  /** Redis store: a release landed; it may have handed the lock to our registered waiter. */
  noteWrite(note: MutexWriteNote): void {
    this.released(note, "redis");
  }

  private released({ ref, fence, handedTo }: MutexWriteNote, store: StoreKind): void {
    this.host.dropWatch(fence);
    const line = this.line(ref, store);
    if (handedTo) line.handedOver(handedTo.token, handedTo);
    else if (line.length) line.letHeadTry();
  }

  async heartbeatOnSocket(ref: LockRef, store: StoreKind, token: string, ttlMs?: number): Promise<HeldAnswer> {
    const r = await (store === "durable" ? this.durableOps : kindOps(this.host.storeOf(store), "mutex")).heartbeat(ref, { token, ttlMs });
    return r.status === "lost" ? r : { status: "ok", answer: { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence } };
  }

  /** The Durable store's release hands over in the same call; on Redis, this object hears of it at once (no Worker between). */
  async releaseOnSocket(ref: LockRef, store: StoreKind, token: string): Promise<HeldAnswer> {
    // The id is made here for this one call: no retry carries it, so no answer is kept under it.
    const input = { token, requestId: newRequestId(), idUnrepeated: true };
    const r = await (store === "durable" ? this.durableOps : kindOps(this.host.storeOf(store), "mutex")).release(ref, input);
    if (r.status === "lost") return r;
    if (store === "redis" && r.released && r.watched) this.noteWrite({ ref, fence: r.fence, handedTo: r.handedTo });
    return { status: "ok", answer: { released: r.released, count: r.count } };
  }

  /** The holder has its grant: its answer was delivered, or it heartbeated. */
  pickedUp(token: string): void {
    this.queue?.pickedUp(token);
  }

  takeBack(token: string): void {
    this.queue?.takeBack(token);
  }

  wasTakenBack(token: string): boolean {
    return this.queue?.wasTakenBack(token) ?? false;
  }
}
