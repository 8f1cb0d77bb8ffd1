import { StoreUnavailableError } from "../../errors.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import type { ObjectStoreFault, StoreKind } from "../../lockObject/waitProtocol.js";
import type { LockRef } from "../../store/LockRef.js";
import type { IdempotencyBeginInput, IdempotencyBeginResult } from "./types.js";

/**
 * An idempotency key's part of its lock object: a begin that asked for
 * onExpire (begun and watched in one step), and on the Durable store the
 * operations themselves; completing or failing ends the watch quietly.
 */
export class IdempotencyObjectPart {
  constructor(private readonly host: LockObjectHost) {}

  async beginWatched(
    ref: LockRef,
    input: IdempotencyBeginInput,
    onExpire: string,
    store: StoreKind,
  ): Promise<IdempotencyBeginResult | ObjectStoreFault> {
    let r: IdempotencyBeginResult;
    try {
      r = await this.host.storeOf(store).idempotencyBegin(ref, input);
    } catch (err) {
      // An outage crosses RPC as a plain Error; said as a result, it stays a 503 with its outcome.
      if (err instanceof StoreUnavailableError) return { status: "unavailable", message: err.message, outcome: err.outcome };
      throw err;
    }
    if (r.status === "started") {
      this.host.watchLease({ kind: "idempotency", store, ref, fence: r.fence, expiresAt: r.expiresAt, ttlMs: r.ttlMs, onExpire });
    }
    return r;
  }

  /** Given up or finished on purpose (Redis store: told by the Worker). */
  ended(fence: number): void {
    this.host.dropWatch(fence);
  }

  beginHere(ref: LockRef, input: IdempotencyBeginInput) {
    return this.host.local.idempotencyBegin(ref, input);
  }

  heartbeatHere(ref: LockRef, input: { token: string; ttlMs?: number }) {
    return this.host.local.idempotencyHeartbeat(ref, input);
  }

  async completeHere(ref: LockRef, input: { token: string; responseJson: string; requestId: string }) {
    const r = await this.host.local.idempotencyComplete(ref, input);
    if (r.status === "ok") this.ended(r.fence);
    return r;
  }

  async failHere(ref: LockRef, input: { token: string; requestId: string }) {
    const r = await this.host.local.idempotencyFail(ref, input);
    if (r.status === "ok") this.ended(r.fence);
    return r;
  }
}
