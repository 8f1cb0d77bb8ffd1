import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import type { QueuePolicy } from "../../lockObject/QueuePolicy.js";
import type { RwlockWait, SemaphoreWait, StoreKind, WaitOutcome } from "../../lockObject/waitProtocol.js";
import { WaitQueue, waitOutcomeOf } from "../../lockObject/WaitQueue.js";
import type { LockRef } from "../../store/LockRef.js";
import type { LockStore } from "../../store/types.js";
import { waitFault } from "../../lockObject/waitFault.js";

interface HolderGrant {
  token: string;
  fence: number;
  ttlMs: number;
  expiresAt: number;
}

/** What a many-holder kind brings to its part of the lock object. */
export interface HolderKindSpec<Wait extends RwlockWait | SemaphoreWait, Req, Grant extends HolderGrant> {
  kind: Wait["kind"];
  policy: QueuePolicy<Req, Grant>;
  /** The line's request for a wait. */
  queued(req: Wait): Req;
  /** A re-entry with a held token (never queued, never refused for the line). */
  isReentry(req: Wait): boolean;
  /** One try in the store: a try-lock (waitMs 0) or a re-entry. */
  tryOnce(store: LockStore, req: Wait): Promise<WaitOutcome<Grant>>;
}

/**
 * A many-holder kind's part of its lock object (the read-write lock, the
 * semaphore): its line of waiters, admitted in batches by the kind's store
 * step, and the onExpire watches of its holders, by token. Releases reach
 * it as news (holderReleased) that moves the line.
 */
export class HoldersObjectPart<Wait extends RwlockWait | SemaphoreWait, Req, Grant extends HolderGrant> {
  private queue: WaitQueue<Req, Grant> | undefined;
  /** The store of the requests this object serves now (waiters of one lock all use the same). */
  private storeKind: StoreKind = "durable";

  constructor(
    private readonly host: LockObjectHost,
    private readonly spec: HolderKindSpec<Wait, Req, Grant>,
  ) {}

  private line(ref: LockRef, store: StoreKind): WaitQueue<Req, Grant> {
    this.storeKind = store;
    this.queue ??= new WaitQueue(this.spec.policy, { store: () => this.host.storeOf(this.storeKind), ref });
    return this.queue;
  }

  get waiterCount(): number {
    return this.queue?.length ?? 0;
  }

  /** Waits in line (waitMs > 0), or tries once or re-enters with a watch; never ahead of the line. */
  async wait(req: Wait, signal: AbortSignal): Promise<WaitOutcome<Grant>> {
    const watchGrant = (grant: Grant) => {
      if (!req.onExpire) return;
      this.host.watchLease({
        kind: this.spec.kind,
        store: req.store,
        ref: req.ref,
        fence: grant.fence,
        token: grant.token,
        expiresAt: grant.expiresAt,
        ttlMs: grant.ttlMs,
        onExpire: req.onExpire,
      });
    };
    try {
      const line = this.line(req.ref, req.store);
      const reentry = this.spec.isReentry(req);
      if (reentry || req.waitMs === 0) {
        if (!reentry && line.length) return { status: "locked", retryAfterMs: 100 };
        const outcome = await this.spec.tryOnce(this.host.storeOf(req.store), req);
        if (outcome.status === "granted") watchGrant(outcome.grant);
        return outcome;
      }
      const outcome = await line.wait(this.spec.queued(req), req.waitMs, signal);
      if (outcome.status === "granted") watchGrant(outcome.grant);
      return waitOutcomeOf(outcome);
    } catch (err) {
      return waitFault(`lock object ${this.spec.kind} wait`, err);
    }
  }

  /** A holder released (in Redis, or here): its watch ends if it released for good, and the line may move. */
  released(ref: LockRef, store: StoreKind, token: string, endedWatch: boolean): void {
    if (endedWatch) this.host.dropWatch(token);
    // With waiters, the next store step; with none (the object restarted and lost its line), the idle step drops their gate.
    this.line(ref, store).kick(true);
  }

  /** The holder has its grant: its answer was delivered, or it heartbeated. */
  pickedUp(token: string): void {
    this.queue?.pickedUp(token);
  }
}
