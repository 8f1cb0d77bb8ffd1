import type { LockObjectHost } from "../lockObject/LockObjectHost.js";
import type { HeldAnswer, KindObjectPart } from "../lockObject/KindObjectPart.js";
import { newRequestId } from "../tokens.js";
import type { QueuePolicy } from "../lockObject/line/QueuePolicy.js";
import { waitFault } from "../lockObject/line/waitFault.js";
import type { StoreKind, WaitOutcome } from "../lockObject/line/waitProtocol.js";
import { type WaitOptions, WaitQueue } from "../lockObject/line/WaitQueue.js";
import type { KindOps, KindWait } from "../store/kinds.js";
import type { LockRef } from "../store/types.js";
import { kindOps, type LockStore } from "../store/types.js";
import type { HolderForceInput, HolderWriteNote } from "./types.js";

interface HolderGrant {
  token: string;
  fence: number;
  ttlMs: number;
  expiresAt: number;
}

type HolderKind = "rwlock" | "semaphore";
type WaitOf<K extends HolderKind> = KindWait[K];

/** What a many-holder kind brings to its part of the lock object. */
export interface HolderKindSpec<K extends HolderKind, Req, Grant extends HolderGrant> {
  kind: K;
  policy: QueuePolicy<Req, Grant>;
  /** The line's request for a wait. */
  queued(req: WaitOf<K>): Req;
  /** A re-entry with a held token (never queued, never refused for the line). */
  isReentry(req: WaitOf<K>): boolean;
  /** One try in the store: a try-lock (waitMs 0) or a re-entry. */
  tryOnce(store: LockStore, req: WaitOf<K>): Promise<WaitOutcome<Grant>>;
  /** Whether a release's answer ended the holder's watch (it released for good). */
  endedWatch(release: Awaited<ReturnType<KindOps[K]["release"]>> & { status: "ok" }): boolean;
  /** A socket holder's release: what the store is asked (every hold of the token), and the answer HTTP would give. */
  releaseInput(token: string, requestId: string): Parameters<KindOps[K]["release"]>[1];
  releaseAnswer(release: Awaited<ReturnType<KindOps[K]["release"]>> & { status: "ok" }): Record<string, unknown>;
}

/**
 * A many-holder kind's part of its lock object (the read-write lock, the
 * semaphore): its line of waiters, admitted in batches by the kind's store
 * step, and the onExpire watches of its holders, by token. Releases reach
 * it as a note of the write (noteWrite) that moves the line; on the Durable store its own
 * release does the same in the same call.
 */
export class HoldersObjectPart<K extends HolderKind, Req, Grant extends HolderGrant> implements KindObjectPart<K> {
  private queue: WaitQueue<Req, Grant> | undefined;
  /** The store of the requests this object serves now (waiters of one lock all use the same). */
  private storeKind: StoreKind = "durable";
  readonly durableOps: KindOps[K];

  constructor(
    private readonly host: LockObjectHost,
    private readonly spec: HolderKindSpec<K, Req, Grant>,
  ) {
    // Both many-holder kinds share heartbeat and release shapes; what differs is in the spec.
    const own = host.ownStore[spec.kind] as KindOps[HolderKind];
    this.durableOps = {
      ...own,
      heartbeat: async (ref: LockRef, input: { token: string; ttlMs?: number }) => {
        const r = await own.heartbeat(ref, input);
        if (r.status === "ok") this.pickedUp(input.token);
        return r;
      },
      release: async (ref: LockRef, input: Parameters<KindOps[HolderKind]["release"]>[1]) => {
        const r = await (own.release as (ref: LockRef, input: unknown) => ReturnType<KindOps[K]["release"]>)(ref, input);
        if (r.status === "ok") this.released({ ref, token: input.token, endedWatch: spec.endedWatch(r as never) }, "durable");
        return r;
      },
      forceRelease: async (ref: LockRef, input: HolderForceInput) => {
        const r = await own.forceRelease(ref, input);
        if (r.status === "ok") this.released({ ref, token: "", endedWatch: false, endedTokens: r.endedTokens }, "durable");
        return r;
      },
    } as unknown as KindOps[K];
  }

  private line(ref: LockRef, store: StoreKind): WaitQueue<Req, Grant> {
    this.storeKind = store;
    this.queue ??= new WaitQueue(this.spec.policy, {
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
  async wait(req: WaitOf<K>, signal: AbortSignal, options?: WaitOptions): Promise<WaitOutcome<Grant>> {
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
        ...(req.holder === undefined ? {} : { holderLabel: req.holder }),
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
      const outcome = await line.wait(this.spec.queued(req), req.waitMs, signal, options);
      if (outcome.status === "granted") watchGrant(outcome.grant);
      return outcome;
    } catch (err) {
      return waitFault(`lock object ${this.spec.kind} wait`, err);
    }
  }

  /** Redis store: a holder released. */
  noteWrite(note: HolderWriteNote): void {
    this.released(note, "redis");
  }

  /** A holder released (in Redis, or here): its watch ends if it released for good, and the line may move. */
  private released({ ref, token, endedWatch, endedTokens }: HolderWriteNote, store: StoreKind): void {
    if (endedWatch) this.host.dropWatch(token);
    for (const ended of endedTokens ?? []) this.host.dropWatch(ended);
    // With waiters, the next store step; with none (the object restarted and lost its line), the idle step drops their gate.
    this.line(ref, store).letHeadTry(true);
  }

  async heartbeatOnSocket(ref: LockRef, store: StoreKind, token: string, ttlMs?: number): Promise<HeldAnswer> {
    const ops = (store === "durable" ? this.durableOps : kindOps(this.host.storeOf(store), this.spec.kind)) as KindOps[HolderKind];
    const r = await ops.heartbeat(ref, { token, ttlMs });
    return r.status === "lost" ? r : { status: "ok", answer: { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence } };
  }

  /** The Durable store's release moves the line in the same call; on Redis, this object hears of it at once. */
  async releaseOnSocket(ref: LockRef, store: StoreKind, token: string): Promise<HeldAnswer> {
    const ops = store === "durable" ? this.durableOps : kindOps(this.host.storeOf(store), this.spec.kind);
    const release = ops.release as (ref: LockRef, input: unknown) => ReturnType<KindOps[K]["release"]>;
    // The id is made here for this one call: no retry carries it, so no answer is kept under it.
    const r = await release(ref, { ...this.spec.releaseInput(token, newRequestId()), idUnrepeated: true });
    if (r.status === "lost") return { status: "lost" };
    const ok = r as Awaited<ReturnType<KindOps[K]["release"]>> & { status: "ok" };
    const endedWatch = this.spec.endedWatch(ok);
    if (store === "redis" && ((ok as { waiters?: boolean }).waiters || endedWatch)) this.noteWrite({ ref, token, endedWatch });
    return { status: "ok", answer: this.spec.releaseAnswer(ok) };
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
