import { SEMAPHORE } from "./types.js";
import { ConflictError, LeaseLostError, LockedError } from "../../errors.js";
import { leaseAcquire } from "../../service/leases.js";
import type { WriteNotes } from "../../service/ServiceKind.js";
import { forceReleaseNote } from "../manyHolders/service.js";
import type { ServiceRequest } from "../../service/ServiceContext.js";
import { kindOps } from "../../store/types.js";
import { limitMismatchMessage } from "./objectPart.js";
import { semaphoreAcquireBody, semaphoreGrant } from "./schemas.js";
import { serviceContextOf } from "../../service/requestContext.js";

/** The semaphore's acquire and release (the rest is every lease kind's: src/service/leases.ts). */
export const semaphoreAcquire = leaseAcquire({
  key: SEMAPHORE,
  body: semaphoreAcquireBody,
  grant: semaphoreGrant,
  async tryStore(_ctx, ops, ref, body, _mode, { newToken }) {
    const { limit, permits, ttlMs, waitMs, holder } = body;
    const r = await ops.acquire(ref, { token: newToken, limit, permits, ttlMs, watch: false, holder });
    if (r.status === "granted") return r.grant;
    if (r.status === "limit_mismatch") throw new ConflictError("limit_mismatch", limitMismatchMessage(r.limit));
    if (waitMs === 0) throw new LockedError(r.retryAfterMs, "the permits are taken", r.current);
    return undefined;
  },
});

export async function releaseSemaphore(request: ServiceRequest, name: string, token: string) {
  const ctx = serviceContextOf(request);
  const ref = { ns: ctx.ns, name };
  const r = await kindOps(ctx.store, SEMAPHORE).release(ref, { token, ...(await ctx.ids.write(`semaphore:${name}:release`, token)) });
  if (r.status === "lost") throw new LeaseLostError();
  return { released: true as const, permits: r.permits, available: r.available };
}

/** The writes its lock object must hear of (its line may move, a watch ends). */
export const semaphoreNotes: WriteNotes<typeof SEMAPHORE> = {
  release: (r, ref, { token }) => (r.status === "ok" && (r.waiters || r.watched) ? { ref, token, endedWatch: r.watched } : undefined),
  forceRelease: forceReleaseNote,
};
