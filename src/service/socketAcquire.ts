import type { KindWait, WaitingKindName } from "../kinds/registry/ops.js";
import type { SocketAt } from "../wire/socketProtocol.js";
import type { AcquireAnswer } from "./acquireFlow.js";
import type { ServiceContext } from "./ServiceContext.js";

/** What a grant on a wait socket carries for the socket's own bookkeeping (its ack, a kept socket's lease). */
export type SocketGrant = { token: string; ttlMs: number };

/**
 * A waiting kind's acquire as a wait socket asks it (src/kinds/<kind>/service.ts):
 * the same service and acquire flow as its HTTP route, so the checks and the
 * metrics are the HTTP acquire's.
 */
export interface KindSocketAcquire<K extends WaitingKindName> {
  /** An acquire message: checked as the HTTP acquire body is (the same schema), then the kind's acquire. */
  acquire(ctx: ServiceContext, at: SocketAt, message: unknown, signal: AbortSignal): Promise<AcquireAnswer<SocketGrant>>;
  /** A wait the object resumes after it woke (checked when it began): into the line again, through the same flow. */
  resume(ctx: ServiceContext, wait: KindWait[K], signal: AbortSignal): Promise<AcquireAnswer<SocketGrant>>;
}
