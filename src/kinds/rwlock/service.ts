import { RWLOCK } from "./types.js";
import type * as z from "zod/mini";
import { ConflictError, InternalError, LeaseLostError, LockedError } from "../../errors.js";
import { lockObjectClient } from "../../lockObject/lockObjectClient.js";
import { type AcquireSteps, acquireFlow } from "../../service/acquireFlow.js";
import { checkOnExpire } from "../../wire/onExpireTarget.js";
import type { ServiceContext } from "../../service/ServiceContext.js";
import { kindOps } from "../../store/types.js";
import { UPGRADE_REFUSED } from "./objectPart.js";
import { type rwAcquireBody, rwGrant } from "./schemas.js";
import type { RwGrant, RwMode, RwState } from "./types.js";

/**
 * The read-write lock as the HTTP API serves it: call the store, then tell
 * the lock object, in this one place. An uncontended acquire, heartbeat or
 * release is one store call; the object is involved to wait, to watch for
 * onExpire, and to hear of releases while it has a line.
 */
/** The request body, as its schema leaves it (defaults applied): one source for both. */
export type RwAcquireBody = z.output<typeof rwAcquireBody>;

export async function acquireRw(ctx: ServiceContext, name: string, mode: RwMode, body: RwAcquireBody, signal?: AbortSignal) {
  return acquireFlow(ctx, await rwAcquireSteps(ctx, name, mode, body), signal);
}

/** The read-write lock's acquire as the acquire flow runs it: the checks, the ids, its one try in the store, its wait in the line. */
async function rwAcquireSteps(ctx: ServiceContext, name: string, mode: RwMode, body: RwAcquireBody): Promise<AcquireSteps<typeof RWLOCK, RwGrant>> {
  if (body.onExpire) checkOnExpire(ctx.env, ctx.ns, body.onExpire);
  const ref = { ns: ctx.ns, name };
  const rwlock = kindOps(ctx.store, RWLOCK);
  const reenter = body.token !== undefined;
  const newToken = reenter ? undefined : await ctx.ids.token(`rwlock:${name}:${mode}/acquire`);
  const write = await ctx.ids.write(`rwlock:${name}:${mode}/acquire`, body.token);
  return {
    kind: "rwlock",
    ref,
    tryStore:
      body.onExpire === undefined
        ? async () => {
            const r = await rwlock.acquire(ref, {
              mode,
              token: body.token ?? (newToken as string),
              reenter,
              ttlMs: body.ttlMs,
              watch: false,
              ...write,
              holder: body.holder,
            });
            if (r.status === "granted") return r.grant;
            if (r.status === "lost") throw new LeaseLostError();
            if (r.status === "upgrade") throw new ConflictError(UPGRADE_REFUSED.code, UPGRADE_REFUSED.message);
            if (reenter) throw new InternalError("a re-entry answered busy");
            if (body.waitMs === 0) throw new LockedError(r.retryAfterMs, undefined, r.current);
            return undefined;
          }
        : undefined,
    wait: {
      kind: "rwlock",
      store: ctx.store.kind,
      ref,
      mode,
      ttlMs: body.ttlMs,
      waitMs: body.waitMs,
      token: body.token,
      onExpire: body.onExpire,
      newToken,
      requestId: write.requestId,
      holder: body.holder,
    },
    grantSchema: rwGrant,
    heartbeat: (token) => rwlock.heartbeat(ref, { token }),
  };
}

/** Extends the token's lease, whatever modes it holds. */
export async function heartbeatRw(ctx: ServiceContext, name: string, token: string, ttlMs?: number) {
  const r = await kindOps(ctx.store, RWLOCK).heartbeat({ ns: ctx.ns, name }, { token, ttlMs });
  if (r.status === "lost") throw new LeaseLostError();
  return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
}

export async function releaseRw(ctx: ServiceContext, name: string, token: string, mode: RwMode | "any") {
  const ref = { ns: ctx.ns, name };
  const r = await kindOps(ctx.store, RWLOCK).release(ref, {
    token,
    mode,
    ...(await ctx.ids.write(`rwlock:${name}:${mode}/release`, token)),
  });
  if (r.status === "lost") throw new LeaseLostError(mode === "any" ? undefined : `this token holds no ${mode} lock`);
  // Redis store: the object hears of it after the answer (its line may move, a watch
  // ends). The Durable store's object did both in the same call.
  const endedWatch = r.released && r.watched;
  if (ctx.store.kind === "redis" && releaseTellsObject(r)) {
    ctx.afterAnswer("released", () => lockObjectClient(ctx.env, "rwlock", ref).noteWrite({ ref, token, endedWatch }));
  }
  return { released: r.released, mode: r.mode, count: r.count };
}

/** A release the lock object must hear of (its line may move, a watch ends): told by noteWrite, after the answer. */
export const releaseTellsObject = (r: { waiters?: unknown; released?: unknown; watched?: unknown }) =>
  r.waiters === true || (r.released === true && r.watched === true);

export async function inspectRw(ctx: ServiceContext, name: string): Promise<RwState & { waiters: number }> {
  const ref = { ns: ctx.ns, name };
  const [state, waiters] = await Promise.all([kindOps(ctx.store, RWLOCK).inspect(ref), lockObjectClient(ctx.env, "rwlock", ref).waiterCount()]);
  return { ...state, waiters };
}
