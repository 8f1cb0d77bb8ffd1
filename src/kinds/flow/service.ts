import { FLOW, type FlowAcquireResult, type FlowGrant, type FlowState, limitMismatchMessage } from "./types.js";
import type * as z from "zod/mini";
import { ConflictError, LeaseLostError, LockedError } from "../../errors.js";
import { lockObjectClient } from "../../lockObject/lockObjectClient.js";
import { type AcquireSteps, acquireFlow } from "../../service/acquireFlow.js";
import { checkOnExpire } from "../../wire/onExpireTarget.js";
import type { ServiceContext } from "../../service/ServiceContext.js";
import { kindOps } from "../../store/types.js";
import { writeMetric } from "../../metrics.js";
import { type flowAcquireBody, flowGrant } from "./schemas.js";

/** The flow limit as the HTTP API serves it: call the store, then tell the lock object (the semaphore's shape). */

/** The request body, as its schema leaves it (defaults applied). */
export type FlowAcquireBody = z.output<typeof flowAcquireBody>;

export async function acquireSlot(ctx: ServiceContext, name: string, body: FlowAcquireBody, signal?: AbortSignal) {
  return acquireFlow(ctx, await flowAcquireSteps(ctx, name, body), signal);
}

/** A busy try in words: which part of the limit turned it away. */
function busyMessage(r: FlowAcquireResult & { status: "busy" }, body: FlowAcquireBody): string {
  if (r.reason === "rate") return `the rate is used up: ${body.rate?.count} starts in the last ${body.rate?.perMs} ms`;
  if (r.reason === "concurrency") return `every slot is held (concurrency ${body.concurrency})`;
  return "others wait for a slot first";
}

/** The flow's acquire as the acquire flow runs it: the checks, the ids, its one try in the store, its wait in the line. */
async function flowAcquireSteps(ctx: ServiceContext, name: string, body: FlowAcquireBody): Promise<AcquireSteps<typeof FLOW, FlowGrant>> {
  if (body.onExpire) checkOnExpire(ctx.env, ctx.ns, body.onExpire);
  const ref = { ns: ctx.ns, name };
  const flow = kindOps(ctx.store, FLOW);
  const newToken = await ctx.ids.token(`flow:${name}:acquire`);
  const limit = { concurrency: body.concurrency, rate: body.rate };
  return {
    kind: "flow",
    ref,
    tryStore:
      body.onExpire === undefined
        ? async () => {
            const r = await flow.acquire(ref, { token: newToken, ...limit, ttlMs: body.ttlMs, watch: false, holder: body.holder });
            if (r.status === "granted") return r.grant;
            if (r.status === "limit_mismatch") throw new ConflictError("limit_mismatch", limitMismatchMessage(r.limit, limit));
            // Which part of the limit turned this try away (docs/metrics.md): counted beside the acquire's own busy or grant.
            if (r.reason !== "line") writeMetric(ctx.env, ctx.ns, "flow", r.reason === "rate" ? "busy_rate" : "busy_concurrency");
            if (body.waitMs === 0) throw new LockedError(r.retryAfterMs, busyMessage(r, body), r.current);
            return undefined;
          }
        : undefined,
    wait: {
      kind: "flow",
      store: ctx.store.kind,
      ref,
      ...limit,
      ttlMs: body.ttlMs,
      waitMs: body.waitMs,
      onExpire: body.onExpire,
      newToken,
      holder: body.holder,
    },
    grantSchema: flowGrant,
    heartbeat: (token) => flow.heartbeat(ref, { token }),
  };
}

export async function heartbeatSlot(ctx: ServiceContext, name: string, token: string, ttlMs?: number) {
  const r = await kindOps(ctx.store, FLOW).heartbeat({ ns: ctx.ns, name }, { token, ttlMs });
  if (r.status === "lost") throw new LeaseLostError();
  return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
}

export async function releaseSlot(ctx: ServiceContext, name: string, token: string) {
  const ref = { ns: ctx.ns, name };
  const r = await kindOps(ctx.store, FLOW).release(ref, { token, ...(await ctx.ids.write(`flow:${name}:release`, token)) });
  if (r.status === "lost") throw new LeaseLostError();
  // Redis store: the object hears of it after the answer (see ../rwlock/service.ts).
  if (ctx.store.kind === "redis" && releaseTellsObject(r)) {
    ctx.afterAnswer("released", () => lockObjectClient(ctx.env, "flow", ref).noteWrite({ ref, token, endedWatch: r.watched }));
  }
  return { released: true as const, held: r.held };
}

/** A release the lock object must hear of (its line may move, a watch ends): told by noteWrite, after the answer. */
export const releaseTellsObject = (r: { waiters?: unknown; watched?: unknown }) => r.waiters === true || r.watched === true;

export async function inspectFlow(ctx: ServiceContext, name: string): Promise<FlowState & { waiters: number }> {
  const ref = { ns: ctx.ns, name };
  const [state, waiters] = await Promise.all([kindOps(ctx.store, FLOW).inspect(ref), lockObjectClient(ctx.env, "flow", ref).waiterCount()]);
  return { ...state, waiters };
}
