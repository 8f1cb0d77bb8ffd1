import { FLOW, type FlowAcquireResult, limitMismatchMessage } from "./types.js";
import type * as z from "zod/mini";
import { ConflictError, LeaseLostError, LockedError } from "../../errors.js";
import { leaseAcquire } from "../../service/leases.js";
import type { WriteNotes } from "../../service/ServiceKind.js";
import type { ServiceRequest } from "../../service/ServiceContext.js";
import { kindOps } from "../../store/types.js";
import { writeMetric } from "../../metrics.js";
import { forceReleaseNote } from "../manyHolders/service.js";
import { flowAcquireBody, flowGrant } from "./schemas.js";
import { serviceContextOf } from "../../service/requestContext.js";

/** The flow limit's acquire and release (the rest is every lease kind's: src/service/leases.ts); the semaphore's shape. */

/** The request body, as its schema leaves it (defaults applied). */
type FlowAcquireBody = z.output<typeof flowAcquireBody>;

/** A busy try in words: which part of the limit turned it away. */
function busyMessage(r: FlowAcquireResult & { status: "busy" }, body: FlowAcquireBody): string {
  if (r.reason === "rate") return `the rate is used up: ${body.rate?.count} starts in the last ${body.rate?.perMs} ms`;
  if (r.reason === "concurrency") return `every slot is held (concurrency ${body.concurrency})`;
  return "others wait for a slot first";
}

export const flowAcquire = leaseAcquire({
  key: FLOW,
  body: flowAcquireBody,
  grant: flowGrant,
  async tryStore(ctx, ops, ref, body, _mode, { newToken }) {
    const limit = { concurrency: body.concurrency, rate: body.rate };
    const r = await ops.acquire(ref, { token: newToken, ...limit, ttlMs: body.ttlMs, watch: false, holder: body.holder });
    if (r.status === "granted") return r.grant;
    if (r.status === "limit_mismatch") throw new ConflictError("limit_mismatch", limitMismatchMessage(r.limit, limit));
    // Which part of the limit turned this try away (docs/metrics.md): counted beside the acquire's own busy or grant.
    if (r.reason !== "line") writeMetric(ctx.env, ctx.ns, "flow", r.reason === "rate" ? "busy_rate" : "busy_concurrency");
    if (body.waitMs === 0) throw new LockedError(r.retryAfterMs, busyMessage(r, body), r.current);
    return undefined;
  },
});

export async function releaseSlot(request: ServiceRequest, name: string, token: string) {
  const ctx = serviceContextOf(request);
  const ref = { ns: ctx.ns, name };
  const r = await kindOps(ctx.store, FLOW).release(ref, { token, ...(await ctx.ids.write(`flow:${name}:release`, token)) });
  if (r.status === "lost") throw new LeaseLostError();
  return { released: true as const, held: r.held };
}

/** The writes its lock object must hear of (its line may move, a watch ends). */
export const flowNotes: WriteNotes<typeof FLOW> = {
  release: (r, ref, { token }) => (r.status === "ok" && (r.waiters || r.watched) ? { ref, token, endedWatch: r.watched } : undefined),
  forceRelease: forceReleaseNote,
};
