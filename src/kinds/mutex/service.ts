import { MUTEX } from "./types.js";
import { InternalError, LeaseLostError, LockedError, NotHeldError } from "../../errors.js";
import { leaseAcquire } from "../../service/leases.js";
import type { WriteNotes } from "../../service/ServiceKind.js";
import type { ServiceRequest } from "../../service/ServiceContext.js";
import { kindOps } from "../../store/types.js";
import { mutexAcquireBody, mutexGrant } from "./schemas.js";
import { serviceContextOf } from "../../service/requestContext.js";

/** The mutex's acquire and release (the rest is every lease kind's: src/service/leases.ts); the object hears of a release that handed the lock over. */
export const mutexAcquire = leaseAcquire({
  key: MUTEX,
  body: mutexAcquireBody,
  grant: mutexGrant,
  // Only the head of a mutex's line can be granted: a waiter on a lock seen busy lately goes straight there.
  lineFirst: true,
  async tryStore(_ctx, ops, ref, body, _mode, { reenter, newToken, write }) {
    const { ttlMs, waitMs, token, holder, lockDelayMs } = body;
    const mode = reenter ? ("reenter" as const) : ("new" as const);
    const input = { token: token ?? (newToken as string), mode, ttlMs, ...write, watch: false, holder, lockDelayMs };
    const r = await ops.acquire(ref, input);
    if (r.status === "granted") return r.grant;
    if (r.status === "lost") throw new LeaseLostError();
    if (reenter) throw new InternalError("a re-entry answered busy");
    if (waitMs === 0) throw new LockedError(r.retryAfterMs, undefined, r.current);
    return undefined; // held: wait in the lock object's line (it registers the waiter for the handoff)
  },
});

export async function releaseMutex(request: ServiceRequest, name: string, token: string) {
  const ctx = serviceContextOf(request);
  const ref = { ns: ctx.ns, name };
  const r = await kindOps(ctx.store, MUTEX).release(ref, { token, ...(await ctx.ids.write(`mutex:${name}:release`, token)) });
  if (r.status === "lost") throw new LeaseLostError();
  return { released: r.released, count: r.count };
}

/** A release (an operator's too) its lock object must hear of (its waiters, an onExpire watch); the handoff to its waiter happened in the store. */
export const mutexNotes: WriteNotes<typeof MUTEX> = {
  release: (r, ref) => (r.status === "ok" && r.released && r.watched ? { ref, fence: r.fence, handedTo: r.handedTo } : undefined),
};

/**
 * An operator's force release (src/operator/forceRelease.ts checks the key
 * and writes the audit entry): whoever holds it, every level at once; with
 * a fence, only that lease. The next waiter gets it, as after a release.
 */
export async function forceReleaseMutex(request: ServiceRequest, name: string, fence: number | undefined) {
  const ctx = serviceContextOf(request);
  const ref = { ns: ctx.ns, name };
  // Without a client id nothing retries it (the Worker never re-sends a store call), so nothing is kept for it either.
  const write = await ctx.ids.write(`mutex:${name}:force-release`);
  const r = await kindOps(ctx.store, MUTEX).release(ref, { token: "", ...write, force: fence === undefined ? {} : { fence } });
  if (r.status === "lost") {
    throw new NotHeldError(fence === undefined ? `nobody holds the lock ${name}` : `the lock ${name} is not held by the lease of fence ${fence}`);
  }
  return { released: 1, fence: r.fence, holder: r.holder ?? null };
}
