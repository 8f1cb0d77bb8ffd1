import { ConflictError, InternalError, LeaseLostError, LockedError } from "../../errors.js";
import { confirmPickup } from "../../lockObject/confirmPickup.js";
import { grantOf } from "../../lockObject/grantOf.js";
import { lockObjectClient } from "../../lockObject/lockObjectClient.js";
import type { ServiceContext } from "../../service/ServiceContext.js";
import { UPGRADE_REFUSED } from "./objectPart.js";
import { rwGrant } from "./schemas.js";
import type { RwGrant, RwMode, RwState } from "./types.js";

/**
 * The read-write lock as the HTTP API serves it: call the store, then tell
 * the lock object, in this one place. An uncontended acquire, heartbeat or
 * release is one store call; the object is involved to wait, to watch for
 * onExpire, and to hear of releases while it has a line.
 */
export interface RwAcquireBody {
  ttlMs: number;
  waitMs: number;
  token?: string;
  onExpire?: string;
}

export async function acquireRw(ctx: ServiceContext, name: string, mode: RwMode, body: RwAcquireBody, signal?: AbortSignal) {
  const ref = { ns: ctx.ns, name };
  const object = lockObjectClient(ctx.env, "rwlock", ref);
  const reenter = body.token !== undefined;
  const newToken = reenter ? undefined : await ctx.ids.token(`rwlock:${name}:${mode}/acquire`);
  const requestId = await ctx.ids.requestId(`rwlock:${name}:${mode}/acquire`, body.token);
  if (body.onExpire === undefined) {
    const r = await ctx.store.rwlockAcquire(ref, {
      mode,
      token: body.token ?? (newToken as string),
      reenter,
      ttlMs: body.ttlMs,
      watch: false,
      requestId,
    });
    if (r.status === "granted") return { grant: r.grant };
    if (r.status === "lost") throw new LeaseLostError();
    if (r.status === "upgrade") throw new ConflictError(UPGRADE_REFUSED.code, UPGRADE_REFUSED.message);
    if (reenter) throw new InternalError("a re-entry answered busy");
    if (body.waitMs === 0) throw new LockedError(r.retryAfterMs);
  }
  const outcome = await object.wait(
    {
      kind: "rwlock",
      store: ctx.store.kind,
      ref,
      mode,
      ttlMs: body.ttlMs,
      waitMs: body.waitMs,
      token: body.token,
      onExpire: body.onExpire,
      newToken,
      requestId,
    },
    rwGrant,
    signal,
  );
  const grant: RwGrant = grantOf(outcome);
  if (outcome.status !== "granted" || !outcome.pickup) return { grant };
  return { grant, confirmDelivery: confirmPickup(object, grant.token, () => ctx.store.rwlockHeartbeat(ref, { token: grant.token })) };
}

/** Extends the token's lease, whatever modes it holds. */
export async function heartbeatRw(ctx: ServiceContext, name: string, token: string, ttlMs?: number) {
  const r = await ctx.store.rwlockHeartbeat({ ns: ctx.ns, name }, { token, ttlMs });
  if (r.status === "lost") throw new LeaseLostError();
  return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
}

export async function releaseRw(ctx: ServiceContext, name: string, token: string, mode: RwMode | "any") {
  const ref = { ns: ctx.ns, name };
  const r = await ctx.store.rwlockRelease(ref, { token, mode, requestId: await ctx.ids.requestId(`rwlock:${name}:${mode}/release`, token) });
  if (r.status === "lost") throw new LeaseLostError(mode === "any" ? undefined : `this token holds no ${mode} lock`);
  // Redis store: the object hears of it after the answer (its line may move, a watch
  // ends). The Durable store's object did both in the same call.
  const endedWatch = r.released && r.watched;
  if (ctx.store.kind === "redis" && (r.waiters || endedWatch)) {
    ctx.later("released", () => lockObjectClient(ctx.env, "rwlock", ref).holderReleased("rwlock", token, endedWatch));
  }
  return { released: r.released, mode: r.mode, count: r.count };
}

export async function inspectRw(ctx: ServiceContext, name: string): Promise<RwState & { waiters: number }> {
  const ref = { ns: ctx.ns, name };
  const [state, waiters] = await Promise.all([ctx.store.rwlockInspect(ref), lockObjectClient(ctx.env, "rwlock", ref).waiterCount()]);
  return { ...state, waiters };
}
