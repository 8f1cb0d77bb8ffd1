import { SEMAPHORE } from "./types.js";
import type * as z from "zod/mini";
import { ConflictError, LeaseLostError, LockedError } from "../../errors.js";
import { lockObjectClient } from "../../lockObject/lockObjectClient.js";
import { type AcquireSteps, acquireFlow } from "../../service/acquireFlow.js";
import { checkOnExpire } from "../../wire/onExpireTarget.js";
import type { ServiceContext } from "../../service/ServiceContext.js";
import { kindOps } from "../../store/types.js";
import { limitMismatchMessage } from "./objectPart.js";
import { type semaphoreAcquireBody, semaphoreGrant } from "./schemas.js";
import type { SemaphoreGrant, SemaphoreState } from "./types.js";

/**
 * The semaphore as the HTTP API serves it: call the store, then tell the
 * lock object, in this one place (see ../rwlock/service.ts: the same shape).
 */
/** The request body, as its schema leaves it (defaults applied): one source for both. */
export type SemaphoreAcquireBody = z.output<typeof semaphoreAcquireBody>;

export async function acquireSemaphore(ctx: ServiceContext, name: string, body: SemaphoreAcquireBody, signal?: AbortSignal) {
  return acquireFlow(ctx, await semaphoreAcquireSteps(ctx, name, body), signal);
}

/** The semaphore's acquire as the acquire flow runs it: the checks, the ids, its one try in the store, its wait in the line. */
async function semaphoreAcquireSteps(
  ctx: ServiceContext,
  name: string,
  body: SemaphoreAcquireBody,
): Promise<AcquireSteps<typeof SEMAPHORE, SemaphoreGrant>> {
  if (body.onExpire) checkOnExpire(ctx.env, ctx.ns, body.onExpire);
  const ref = { ns: ctx.ns, name };
  const semaphore = kindOps(ctx.store, SEMAPHORE);
  const newToken = await ctx.ids.token(`semaphore:${name}:acquire`);
  return {
    kind: "semaphore",
    ref,
    tryStore:
      body.onExpire === undefined
        ? async () => {
            const r = await semaphore.acquire(ref, {
              token: newToken,
              limit: body.limit,
              permits: body.permits,
              ttlMs: body.ttlMs,
              watch: false,
              holder: body.holder,
            });
            if (r.status === "granted") return r.grant;
            if (r.status === "limit_mismatch") throw new ConflictError("limit_mismatch", limitMismatchMessage(r.limit));
            if (body.waitMs === 0) throw new LockedError(r.retryAfterMs, "the permits are taken", r.current);
            return undefined;
          }
        : undefined,
    wait: {
      kind: "semaphore",
      store: ctx.store.kind,
      ref,
      limit: body.limit,
      permits: body.permits,
      ttlMs: body.ttlMs,
      waitMs: body.waitMs,
      onExpire: body.onExpire,
      newToken,
      holder: body.holder,
    },
    grantSchema: semaphoreGrant,
    heartbeat: (token) => semaphore.heartbeat(ref, { token }),
  };
}

export async function heartbeatSemaphore(ctx: ServiceContext, name: string, token: string, ttlMs?: number) {
  const r = await kindOps(ctx.store, SEMAPHORE).heartbeat({ ns: ctx.ns, name }, { token, ttlMs });
  if (r.status === "lost") throw new LeaseLostError();
  return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
}

export async function releaseSemaphore(ctx: ServiceContext, name: string, token: string) {
  const ref = { ns: ctx.ns, name };
  const r = await kindOps(ctx.store, SEMAPHORE).release(ref, { token, ...(await ctx.ids.write(`semaphore:${name}:release`, token)) });
  if (r.status === "lost") throw new LeaseLostError();
  // Redis store: the object hears of it after the answer (see ../rwlock/service.ts).
  if (ctx.store.kind === "redis" && releaseTellsObject(r)) {
    ctx.afterAnswer("released", () => lockObjectClient(ctx.env, "semaphore", ref).noteWrite({ ref, token, endedWatch: r.watched }));
  }
  return { released: true as const, permits: r.permits, available: r.available };
}

/** A release the lock object must hear of (its line may move, a watch ends): told by noteWrite, after the answer. */
export const releaseTellsObject = (r: { waiters?: unknown; watched?: unknown }) => r.waiters === true || r.watched === true;

export async function inspectSemaphore(ctx: ServiceContext, name: string): Promise<SemaphoreState & { waiters: number }> {
  const ref = { ns: ctx.ns, name };
  const [state, waiters] = await Promise.all([kindOps(ctx.store, SEMAPHORE).inspect(ref), lockObjectClient(ctx.env, "semaphore", ref).waiterCount()]);
  return { ...state, waiters };
}
