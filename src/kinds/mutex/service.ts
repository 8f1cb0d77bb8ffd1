import { MUTEX } from "./types.js";
import type * as z from "zod/mini";
import { InternalError, LeaseLostError, LockedError, NotHeldError } from "../../errors.js";
import { lockObjectClient } from "../../lockObject/lockObjectClient.js";
import { type AcquireAnswer, type AcquireSteps, acquireFlow } from "../../service/acquireFlow.js";
import { checkOnExpire } from "../../wire/onExpireTarget.js";
import type { ServiceContext } from "../../service/ServiceContext.js";
import { kindOps } from "../../store/types.js";
import { recentlyContended, sawContended } from "./recentlyContended.js";
import { type mutexAcquireBody, mutexGrant } from "./schemas.js";
import type { LockRef } from "../../store/types.js";
import type { MutexGrant, MutexReleaseResult, MutexState } from "./types.js";

/**
 * The mutex as the HTTP API serves it: call the store, then tell the lock
 * object, in this one place. On the Redis store an uncontended acquire,
 * heartbeat or release is one Upstash round trip and no object call; the
 * object is involved only to wait, to watch for onExpire, or when a release
 * handed the lock to its waiter. On the Durable store the store is the
 * object, which does both in one call.
 */
/** The request body, as its schema leaves it (defaults applied): one source for both. */
export type AcquireBody = z.output<typeof mutexAcquireBody>;

export async function acquireMutex(ctx: ServiceContext, name: string, body: AcquireBody, signal?: AbortSignal): Promise<AcquireAnswer<MutexGrant>> {
  return acquireFlow(ctx, await mutexAcquireSteps(ctx, name, body), signal);
}

/** The mutex's acquire as the acquire flow runs it: the checks, the ids, its one try in the store, its wait in the line. */
async function mutexAcquireSteps(ctx: ServiceContext, name: string, body: AcquireBody): Promise<AcquireSteps<typeof MUTEX, MutexGrant>> {
  if (body.onExpire) checkOnExpire(ctx.env, ctx.ns, body.onExpire);
  const ref = { ns: ctx.ns, name };
  const mutex = kindOps(ctx.store, MUTEX);
  const hint = `${ctx.store.kind}:${ctx.ns}:${name}`;
  const newToken = body.token === undefined ? await ctx.ids.token(`mutex:${name}:acquire`) : undefined;
  const write = await ctx.ids.write(`mutex:${name}:acquire`, body.token);
  // A client's retry (its request id again) tries the store first, where its earlier grant may be.
  const tryStoreFirst =
    body.token !== undefined || body.waitMs === 0 || ctx.ids.fromClient || (ctx.store.kind === "redis" && !recentlyContended(hint));
  const reenter = body.token !== undefined;
  return {
    kind: "mutex",
    ref,
    tryStore:
      body.onExpire === undefined && tryStoreFirst
        ? async () => {
            const r = await mutex.acquire(ref, {
              token: body.token ?? (newToken as string),
              mode: reenter ? "reenter" : "new",
              ttlMs: body.ttlMs,
              ...write,
              watch: false,
              holder: body.holder,
              lockDelayMs: body.lockDelayMs,
            });
            if (r.status === "granted") return r.grant;
            if (r.status === "lost") throw new LeaseLostError();
            if (reenter) throw new InternalError("a re-entry answered busy");
            if (body.waitMs === 0) throw new LockedError(r.retryAfterMs, undefined, r.current);
            // Held: wait in the lock object's line (it registers us for the handoff).
            sawContended(hint);
            return undefined;
          }
        : undefined,
    wait: {
      kind: "mutex",
      store: ctx.store.kind,
      ref,
      ttlMs: body.ttlMs,
      waitMs: body.waitMs,
      token: body.token,
      onExpire: body.onExpire,
      newToken,
      requestId: write.requestId,
      holder: body.holder,
      lockDelayMs: body.lockDelayMs,
    },
    grantSchema: mutexGrant,
    heartbeat: (token) => mutex.heartbeat(ref, { token }),
    fromLine: () => sawContended(hint),
  };
}

export async function heartbeatMutex(ctx: ServiceContext, name: string, token: string, ttlMs?: number) {
  const r = await kindOps(ctx.store, MUTEX).heartbeat({ ns: ctx.ns, name }, { token, ttlMs });
  if (r.status === "lost") throw new LeaseLostError();
  // No object call: a lock object waiting behind this lease wakes at the old
  // end, reads the new remaining time from the store and sleeps again.
  return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
}

export async function releaseMutex(ctx: ServiceContext, name: string, token: string) {
  const ref = { ns: ctx.ns, name };
  const r = await kindOps(ctx.store, MUTEX).release(ref, { token, ...(await ctx.ids.write(`mutex:${name}:release`, token)) });
  if (r.status === "lost") throw new LeaseLostError();
  tellReleased(ctx, ref, r);
  return { released: r.released, count: r.count };
}

/**
 * Redis store: the lock object hears of a release (an operator's too) after
 * the answer; the handoff to its waiter already happened in the store. The
 * Durable store's object did it in the same call.
 */
function tellReleased(ctx: ServiceContext, ref: LockRef, r: MutexReleaseResult & { status: "ok" }): void {
  if (ctx.store.kind !== "redis" || !releaseTellsObject(r)) return;
  const { fence, handedTo } = r;
  ctx.afterAnswer("released", () => lockObjectClient(ctx.env, "mutex", ref).noteWrite({ ref, fence, handedTo }));
}

/** A release the lock object must hear of (its waiters, an onExpire watch): told by noteWrite, after the answer. */
export const releaseTellsObject = (r: { released?: unknown; watched?: unknown }) => r.released === true && r.watched === true;

export async function inspectMutex(ctx: ServiceContext, name: string): Promise<MutexState & { waiters: number }> {
  const ref = { ns: ctx.ns, name };
  const [state, waiters] = await Promise.all([kindOps(ctx.store, MUTEX).inspect(ref), lockObjectClient(ctx.env, "mutex", ref).waiterCount()]);
  return { ...state, waiters };
}

/**
 * An operator's force release (src/operator/forceRelease.ts checks the key
 * and writes the audit entry): whoever holds it, every level at once; with
 * a fence, only that lease. The next waiter gets it, as after a release.
 */
export async function forceReleaseMutex(ctx: ServiceContext, name: string, fence: number | undefined) {
  const ref = { ns: ctx.ns, name };
  // Without a client id nothing retries it (the Worker never re-sends a store call), so nothing is kept for it either.
  const write = await ctx.ids.write(`mutex:${name}:force-release`);
  const r = await kindOps(ctx.store, MUTEX).release(ref, { token: "", ...write, force: fence === undefined ? {} : { fence } });
  if (r.status === "lost") {
    throw new NotHeldError(fence === undefined ? `nobody holds the lock ${name}` : `the lock ${name} is not held by the lease of fence ${fence}`);
  }
  tellReleased(ctx, ref, r);
  return { released: 1, fence: r.fence, holder: r.holder ?? null };
}
