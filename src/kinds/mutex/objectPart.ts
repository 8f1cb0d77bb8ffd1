import { MUTEX, type MutexRulesKey } from "./types.js";
import type { HeldAnswer, KindObjectPart, WriteEffect } from "../../lockObject/KindObjectPart.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import type { StoreKind, WaitOutcome } from "../../lockObject/line/waitProtocol.js";
import { kindOps, type LockRef, type LockStore } from "../../store/types.js";
import { newOwnerToken, newRequestId } from "../../tokens.js";
import type { OpsOf, WaitOf } from "../../store/kinds.js";
import { type MutexWaitRequest, mutexLinePolicyOf } from "./mutexLinePolicy.js";
import { kindLine } from "../kindLine.js";
import type { MutexGrant, MutexOps, MutexWriteNote } from "./types.js";

/**
 * The mutex's part of its lock object: its line's store step and requests,
 * its one try, what a release does (a handover to the registered waiter), and
 * on the Durable store the operations themselves, telling the object what
 * each did so the line moves in the same call. It serves any kind whose
 * rules are the mutex's (`key`: the mutex's own, or an election's).
 */
export class MutexObjectPart<K extends MutexRulesKey = typeof MUTEX> implements KindObjectPart<K, MutexGrant> {
  readonly durableOps: OpsOf<K>;
  readonly line;

  constructor(
    private readonly host: LockObjectHost,
    private readonly key: K = MUTEX as MutexRulesKey as K,
  ) {
    this.line = kindLine(
      (req: WaitOf<K>): MutexWaitRequest => ({
        ttlMs: req.ttlMs,
        watch: req.onExpire !== undefined,
        holder: req.holder,
        lockDelayMs: req.lockDelayMs,
      }),
      mutexLinePolicyOf(key),
    );
    const own: MutexOps = kindOps(host.ownStore, key);
    this.durableOps = {
      ...own,
      heartbeat: async (ref, input) => {
        const r = await own.heartbeat(ref, input);
        if (r.status === "ok") host.pickedUp(input.token);
        return r;
      },
      release: async (ref, input) => {
        const r = await own.release(ref, input);
        // The handoff happens in this same call: no second object, no round trip.
        if (r.status === "ok" && r.released) host.noteWrite({ ref, fence: r.fence, handedTo: r.handedTo }, "durable");
        return r;
      },
    } as OpsOf<K>;
  }

  /** A try-lock, or a re-entry with the held token. */
  async tryOnce(store: LockStore, req: WaitOf<K>): Promise<WaitOutcome<MutexGrant>> {
    const r = await kindOps(store, this.key).acquire(req.ref, {
      token: req.token ?? req.newToken ?? newOwnerToken(),
      mode: req.token !== undefined ? "reenter" : "new",
      ttlMs: req.ttlMs,
      requestId: req.requestId ?? newRequestId(),
      watch: req.onExpire !== undefined,
      holder: req.holder,
      lockDelayMs: req.lockDelayMs,
    });
    if (r.status === "lost") return { status: "lost" };
    if (r.status === "busy") return { status: "locked", retryAfterMs: r.retryAfterMs, ...(r.current ? { current: r.current } : {}) };
    return { status: "granted", grant: r.grant, pickup: false };
  }

  expiryOf(grant: MutexGrant) {
    return { fence: grant.fence, expiresAt: grant.expiresAt, ttlMs: grant.ttlMs };
  }

  /** A release landed (in Redis, told by the Worker; or here): it may have handed the lock to the registered waiter. */
  noteWrite({ fence, handedTo }: MutexWriteNote): WriteEffect {
    return { endedExpiries: [fence], ...(handedTo ? { handedTo: { token: handedTo.token, grant: handedTo } } : { next: "ifWaiting" }) };
  }

  async heartbeatOnSocket(ref: LockRef, store: StoreKind, token: string, ttlMs?: number): Promise<HeldAnswer> {
    const r = await this.opsOn(store).heartbeat(ref, { token, ttlMs });
    return r.status === "lost" ? r : { status: "ok", answer: { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence } };
  }

  /** The Durable store's release hands over in the same call; on Redis, this object hears of it at once (no Worker between). */
  async releaseOnSocket(ref: LockRef, store: StoreKind, token: string): Promise<HeldAnswer> {
    // The id is made here for this one call: no retry carries it, so no answer is kept under it.
    const r = await this.opsOn(store).release(ref, { token, requestId: newRequestId(), idUnrepeated: true });
    if (r.status === "lost") return r;
    if (store === "redis" && r.released && r.watched) this.host.noteWrite({ ref, fence: r.fence, handedTo: r.handedTo }, "redis");
    return { status: "ok", answer: { released: r.released, count: r.count } };
  }

  private opsOn(store: StoreKind): MutexOps {
    return store === "durable" ? this.durableOps : kindOps(this.host.storeOf(store), this.key);
  }
}
