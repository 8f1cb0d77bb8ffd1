import { RWLOCK } from "./types.js";
import { ConflictError, InternalError, LeaseLostError, LockedError } from "../../errors.js";
import { leaseAcquire } from "../../service/leases.js";
import type { WriteNotes } from "../../service/ServiceKind.js";
import { forceReleaseNote } from "../manyHolders/service.js";
import type { ServiceRequest } from "../../service/ServiceContext.js";
import { kindOps } from "../../store/types.js";
import { UPGRADE_REFUSED } from "./objectPart.js";
import { rwAcquireBody, rwGrant } from "./schemas.js";
import type { RwMode } from "./types.js";
import { serviceContextOf } from "../../service/requestContext.js";

/** The read-write lock's acquire and release (the rest is every lease kind's: src/service/leases.ts). */
export const rwAcquire = leaseAcquire({
  key: RWLOCK,
  body: rwAcquireBody,
  grant: rwGrant,
  // The mode is the path's (every acquire path names one).
  async tryStore(_ctx, ops, ref, body, pathMode, { reenter, newToken, write }) {
    const mode = pathMode ?? "read";
    const { ttlMs, waitMs, token, holder } = body;
    const input = { mode, token: token ?? (newToken as string), reenter, ttlMs, watch: false, ...write, holder };
    const r = await ops.acquire(ref, input);
    if (r.status === "granted") return r.grant;
    if (r.status === "lost") throw new LeaseLostError();
    if (r.status === "upgrade") throw new ConflictError(UPGRADE_REFUSED.code, UPGRADE_REFUSED.message);
    if (reenter) throw new InternalError("a re-entry answered busy");
    if (waitMs === 0) throw new LockedError(r.retryAfterMs, undefined, r.current);
    return undefined;
  },
});

/** A release of one hold of the path's mode, or without one ("any") the token's write hold, else one read hold. */
export async function releaseRw(request: ServiceRequest, name: string, token: string, mode: RwMode | "any" = "any") {
  const ctx = serviceContextOf(request);
  const ref = { ns: ctx.ns, name };
  const r = await kindOps(ctx.store, RWLOCK).release(ref, { token, mode, ...(await ctx.ids.write(`rwlock:${name}:${mode}/release`, token)) });
  if (r.status === "lost") throw new LeaseLostError(mode === "any" ? undefined : `this token holds no ${mode} lock`);
  return { released: r.released, mode: r.mode, count: r.count };
}

/** The writes its lock object must hear of (its line may move, a watch ends). */
export const rwLockNotes: WriteNotes<typeof RWLOCK> = {
  release: (r, ref, { token }) =>
    r.status === "ok" && (r.waiters || (r.released && r.watched)) ? { ref, token, endedWatch: r.released && r.watched } : undefined,
  forceRelease: forceReleaseNote,
};
