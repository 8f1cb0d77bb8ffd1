import type * as z from "zod/mini";
import type { KindWait, WaitingKindName } from "../store/kinds.js";
import { kindOps } from "../store/types.js";
import type { SocketAt } from "../lockObject/sockets/socketSchemas.js";
import { type AcquireAnswer, acquireFlow } from "./acquireFlow.js";
import type { ServiceContext } from "./ServiceContext.js";

/** What a grant on a wait socket carries for the socket's own bookkeeping (its ack, a kept socket's lease). */
export type SocketGrant = { token: string; ttlMs: number };

/**
 * A waiting kind's acquire as a wait socket asks it (src/kinds/<kind>/service.ts):
 * the same service and acquire flow as its HTTP route, so the checks and the
 * metrics are the HTTP acquire's.
 */
export interface KindSocketAcquire<K extends WaitingKindName = WaitingKindName> {
  /** An acquire message: checked as the HTTP acquire body is (the same schema), then the kind's acquire. */
  acquire(ctx: ServiceContext, at: SocketAt, message: unknown, signal: AbortSignal): Promise<AcquireAnswer<SocketGrant>>;
  /** A wait the object resumes after it woke (checked when it began): into the line again, through the same flow. */
  resume(ctx: ServiceContext, wait: KindWait[K], signal: AbortSignal): Promise<AcquireAnswer<SocketGrant>>;
}

/**
 * A kind's `resume`: the wait into the line again through the acquire flow,
 * with the kind's grant schema, and its heartbeat for a pickup the object
 * cannot be told of (the same for every waiting kind).
 */
export function resumeWait<K extends WaitingKindName>(kind: K, grantSchema: z.ZodMiniType<SocketGrant>): KindSocketAcquire<K>["resume"] {
  return (ctx, wait, signal) =>
    acquireFlow(
      ctx,
      {
        kind,
        ref: wait.ref,
        wait,
        grantSchema,
        heartbeat: (token) => (kindOps(ctx.store, kind) as KindHeartbeat).heartbeat(wait.ref, { token }),
      },
      signal,
    );
}

/** What every waiting kind's store operations have in common for a resumed wait. */
type KindHeartbeat = { heartbeat(ref: { ns: string; name: string }, input: { token: string }): Promise<{ status: "ok" | "lost" }> };
