import type { HeldAnswer, KindLine, KindObjectPart, WriteEffect } from "../../lockObject/KindObjectPart.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import { kindLine } from "../kindLine.js";
import type { StoreKind, WaitOutcome } from "../../lockObject/line/waitProtocol.js";
import type { CurrentHolder } from "../../errors.js";
import type { KindKey, KindName, OpsOf, WaitOf } from "../../store/kinds.js";
import { kindOps, type LockRef, type LockStore } from "../../store/types.js";
import { newRequestId } from "../../tokens.js";
import { holderLinePolicy } from "./holderLinePolicy.js";
import type { Admitted, HolderForceInput, HolderOps, HolderWriteNote, QueuedHolder } from "./types.js";

interface HolderGrant {
  token: string;
  fence: number;
  ttlMs: number;
  expiresAt: number;
}

/**
 * A many-holder kind's key: its operations have the holders' shared ones, an admit of its line's waiters,
 * and a release answered ok or lost.
 */
type HolderKind<Req = never, Grant = unknown> = KindKey<
  KindName,
  HolderOps & {
    admit(ref: LockRef, waiters: Array<Req & QueuedHolder>, more: boolean): Promise<Admitted<Grant>>;
    release(ref: LockRef, input: never): Promise<{ status: string }>;
  },
  unknown,
  HolderWriteNote
>;
type ReleaseOk<K extends HolderKind> = Awaited<ReturnType<OpsOf<K>["release"]>> & { status: "ok" };

/** What a many-holder kind brings to its part of the lock object. */
export interface HolderKindSpec<K extends HolderKind, Req, Grant extends HolderGrant> {
  kind: K;
  /** The line's request for a wait (the lease it asks for: leaseOfWait). */
  queued(req: WaitOf<K>): Req;
  /** One try in the store: a try-lock (waitMs 0) or a re-entry. */
  tryOnce(store: LockStore, req: WaitOf<K>): Promise<WaitOutcome<Grant>>;
  /** Whether a release's answer ended the holder's watch (it released for good). */
  endedWatch(release: ReleaseOk<K>): boolean;
  /** A socket holder's release: what the store is asked (every hold of the token), and the answer HTTP would give. */
  releaseInput(token: string, requestId: string): Parameters<OpsOf<K>["release"]>[1];
  releaseAnswer(release: ReleaseOk<K>): Record<string, unknown>;
}

/**
 * A many-holder kind's part of its lock object (the read-write lock, the
 * semaphore): its line's store step admits waiters in batches; its holders'
 * onExpire watches go by token (readers share a fence). A release tells the
 * object (noteWrite), whose line takes its next step; on the Durable store its
 * own release does the same in the same call.
 */
export class HoldersObjectPart<K extends HolderKind<Req, Grant>, Req extends Omit<QueuedHolder, "token" | "markPickup">, Grant extends HolderGrant>
  implements KindObjectPart<K, Grant>
{
  readonly durableOps: OpsOf<K>;
  readonly line: KindLine<WaitOf<K>, Grant>;

  constructor(
    private readonly host: LockObjectHost,
    private readonly spec: HolderKindSpec<K, Req, Grant>,
  ) {
    this.line = kindLine(spec.queued, holderLinePolicy<Req, Grant>(spec.kind));
    // Both many-holder kinds share heartbeat and release shapes; what differs is in the spec.
    const own = kindOps(host.ownStore, spec.kind) as HolderOps & { release(ref: LockRef, input: unknown): Promise<{ status: string }> };
    this.durableOps = {
      ...own,
      heartbeat: async (ref: LockRef, input: { token: string; ttlMs?: number }) => {
        const r = await own.heartbeat(ref, input);
        if (r.status === "ok") host.pickedUp(input.token);
        return r;
      },
      release: async (ref: LockRef, input: { token: string }) => {
        const r = (await own.release(ref, input)) as Awaited<ReturnType<OpsOf<K>["release"]>>;
        if (r.status === "ok") host.noteWrite({ ref, token: input.token, endedWatch: spec.endedWatch(r as never) }, "durable");
        return r;
      },
      forceRelease: async (ref: LockRef, input: HolderForceInput) => {
        const r = await own.forceRelease(ref, input);
        if (r.status === "ok") host.noteWrite({ ref, token: "", endedWatch: false, endedTokens: r.endedTokens }, "durable");
        return r;
      },
    } as unknown as OpsOf<K>;
  }

  tryOnce(store: LockStore, req: WaitOf<K>): Promise<WaitOutcome<Grant>> {
    return this.spec.tryOnce(store, req);
  }

  expiryOf(grant: Grant) {
    return { fence: grant.fence, token: grant.token, expiresAt: grant.expiresAt, ttlMs: grant.ttlMs };
  }

  /** A holder released (in Redis, or here): its watch ends if it released for good, and the line takes its next step. */
  noteWrite({ token, endedWatch, endedTokens }: HolderWriteNote): WriteEffect {
    // With waiters, the next store step; with none (the object restarted and lost its line), the idle step drops their gate.
    return { endedExpiries: [...(endedWatch ? [token] : []), ...(endedTokens ?? [])], next: "always" };
  }

  async heartbeatOnSocket(ref: LockRef, store: StoreKind, token: string, ttlMs?: number): Promise<HeldAnswer> {
    const ops: HolderOps = store === "durable" ? this.durableOps : kindOps(this.host.storeOf(store), this.spec.kind);
    const r = await ops.heartbeat(ref, { token, ttlMs });
    return r.status === "lost" ? r : { status: "ok", answer: { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence } };
  }

  /** The Durable store's release moves the line in the same call; on Redis, this object hears of it at once. */
  async releaseOnSocket(ref: LockRef, store: StoreKind, token: string): Promise<HeldAnswer> {
    const ops = store === "durable" ? this.durableOps : kindOps(this.host.storeOf(store), this.spec.kind);
    const release = ops.release as (ref: LockRef, input: unknown) => ReturnType<OpsOf<K>["release"]>;
    // The id is made here for this one call: no retry carries it, so no answer is kept under it.
    const r = await release(ref, { ...(this.spec.releaseInput(token, newRequestId()) as object), idUnrepeated: true });
    if (r.status === "lost") return { status: "lost" };
    const ok = r as ReleaseOk<K>;
    const endedWatch = this.spec.endedWatch(ok);
    if (store === "redis" && ((ok as { waiters?: boolean }).waiters || endedWatch)) this.host.noteWrite({ ref, token, endedWatch }, "redis");
    return { status: "ok", answer: this.spec.releaseAnswer(ok) };
  }
}

/** The lease a wait asks for, as a many-holder kind's store takes it: its length, its onExpire watch, its label. */
export const leaseOfWait = (req: { ttlMs: number; onExpire?: string; holder?: string }) => ({
  ttlMs: req.ttlMs,
  watch: req.onExpire !== undefined,
  holder: req.holder,
});

/** A try's grant or busy answer as the line's outcome (each kind answers its own refusals before). */
export function grantedOrLocked<Grant>(
  r: { status: "granted"; grant: Grant } | { status: "busy"; retryAfterMs: number; current?: CurrentHolder },
): WaitOutcome<Grant> {
  if (r.status === "granted") return { status: "granted", grant: r.grant, pickup: false };
  return { status: "locked", retryAfterMs: r.retryAfterMs, ...(r.current ? { current: r.current } : {}) };
}
