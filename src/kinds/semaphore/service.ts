import { ConflictError, LeaseLostError, LockedError } from "../../errors.js";
import { confirmPickup } from "../../lockObject/confirmPickup.js";
import { grantOf } from "../../lockObject/grantOf.js";
import { lockObjectClient } from "../../lockObject/lockObjectClient.js";
import type { ServiceContext } from "../../service/ServiceContext.js";
import { limitMismatchMessage } from "./objectPart.js";
import { semaphoreGrant } from "./schemas.js";
import type { SemaphoreGrant, SemaphoreState } from "./types.js";

/**
 * The semaphore as the HTTP API serves it: call the store, then tell the
 * lock object, in this one place (see ../rwlock/service.ts: the same shape).
 */
export interface SemaphoreAcquireBody {
  limit: number;
  permits: number;
  ttlMs: number;
  waitMs: number;
  onExpire?: string;
}

export async function acquireSemaphore(ctx: ServiceContext, name: string, body: SemaphoreAcquireBody, signal?: AbortSignal) {
  const ref = { ns: ctx.ns, name };
  const object = lockObjectClient(ctx.env, "semaphore", ref);
  const newToken = await ctx.ids.token(`semaphore:${name}:acquire`);
  if (body.onExpire === undefined) {
    const r = await ctx.store.semaphoreAcquire(ref, {
      token: newToken,
      limit: body.limit,
      permits: body.permits,
      ttlMs: body.ttlMs,
      watch: false,
    });
    if (r.status === "granted") return { grant: r.grant };
    if (r.status === "limit_mismatch") throw new ConflictError("limit_mismatch", limitMismatchMessage(r.limit));
    if (body.waitMs === 0) throw new LockedError(r.retryAfterMs, "the permits are taken");
  }
  const outcome = await object.wait(
    {
      kind: "semaphore",
      store: ctx.store.kind,
      ref,
      limit: body.limit,
      permits: body.permits,
      ttlMs: body.ttlMs,
      waitMs: body.waitMs,
      onExpire: body.onExpire,
      newToken,
    },
    semaphoreGrant,
    signal,
  );
  const grant: SemaphoreGrant = grantOf(outcome);
  if (outcome.status !== "granted" || !outcome.pickup) return { grant };
  return { grant, confirmDelivery: confirmPickup(object, grant.token, () => ctx.store.semaphoreHeartbeat(ref, { token: grant.token })) };
}

export async function heartbeatSemaphore(ctx: ServiceContext, name: string, token: string, ttlMs?: number) {
  const r = await ctx.store.semaphoreHeartbeat({ ns: ctx.ns, name }, { token, ttlMs });
  if (r.status === "lost") throw new LeaseLostError();
  return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
}

export async function releaseSemaphore(ctx: ServiceContext, name: string, token: string) {
  const ref = { ns: ctx.ns, name };
  const r = await ctx.store.semaphoreRelease(ref, { token, requestId: await ctx.ids.requestId(`semaphore:${name}:release`, token) });
  if (r.status === "lost") throw new LeaseLostError();
  // Redis store: the object hears of it after the answer (see ../rwlock/service.ts).
  if (ctx.store.kind === "redis" && (r.waiters || r.watched)) {
    ctx.later("released", () => lockObjectClient(ctx.env, "semaphore", ref).holderReleased("semaphore", token, r.watched));
  }
  return { released: true as const, permits: r.permits, available: r.available };
}

export async function inspectSemaphore(ctx: ServiceContext, name: string): Promise<SemaphoreState & { waiters: number }> {
  const ref = { ns: ctx.ns, name };
  const [state, waiters] = await Promise.all([ctx.store.semaphoreInspect(ref), lockObjectClient(ctx.env, "semaphore", ref).waiterCount()]);
  return { ...state, waiters };
}
