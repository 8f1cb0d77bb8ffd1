import { IDEMPOTENCY } from "./types.js";
import type { IdempotencyWait } from "./wait.js";
import type * as z from "zod/mini";
import { grantOrThrow } from "../../lockObject/line/grantOrThrow.js";
import { lockObjectClient } from "../../lockObject/lockObjectClient.js";
import { beginAnswer, IdempotencyKeys } from "./idempotencyKeys.js";
import type { ServiceContext, ServiceRequest } from "../../service/ServiceContext.js";
import { countAcquire } from "../../metrics.js";
import type { WriteNotes } from "../../service/ServiceKind.js";
import { checkOnExpire } from "../../wire/onExpireTarget.js";
import type { idempotencyBeginBody } from "./schemas.js";
import { idempotencyBeginResult } from "./wait.js";
import { serviceContextOf } from "../../service/requestContext.js";

/**
 * Idempotency keys as the HTTP API serves them: the store, then the lock
 * object where a watch is involved (a begin with onExpire goes through the
 * object, which begins and watches in one step; a fail tells it afterwards).
 */
const idempotencyOf = (ctx: ServiceContext) => new IdempotencyKeys(ctx.store, ctx.ns);

export type BeginBody = z.output<typeof idempotencyBeginBody>;

/** A begin, counted as an acquire is (countAcquire): an answer is a grant, a run in progress is busy. */
export async function beginIdempotency(request: ServiceRequest, key: string, body: BeginBody) {
  const ctx = serviceContextOf(request);
  if (body.onExpire) checkOnExpire(ctx.env, ctx.ns, body.onExpire);
  return countAcquire(ctx.env, ctx.ns, "idempotency", () => begin(ctx, key, body));
}

async function begin(ctx: ServiceContext, key: string, body: BeginBody) {
  const ids = { token: await ctx.ids.token(`idempotency:${key}:begin`), ...(await ctx.ids.write(`idempotency:${key}:begin`)) };
  if (!body.onExpire) return idempotencyOf(ctx).begin(key, body, ids);
  const ref = { ns: ctx.ns, name: key };
  // With onExpire the key's lock object begins and watches in one step.
  // The body (strict: ttlMs, retainMs, fingerprint, onExpire, holder) is the wait's own part.
  const { token: newToken, requestId } = ids;
  const wait: IdempotencyWait = { ...body, kind: "idempotency", store: ctx.storeKind, ref, waitMs: 0, newToken, requestId };
  const outcome = await lockObjectClient(ctx.env, IDEMPOTENCY.name, ref).wait(wait, idempotencyBeginResult);
  return beginAnswer(grantOrThrow(outcome));
}

/**
 * The writes its lock object must hear of: a complete while someone was told in_progress or watched on
 * the key's wait socket (it hands them the result); a fail always (given up on purpose is not a
 * vanished owner: the watch, if any, ends without a notification).
 */
export const idempotencyNotes: WriteNotes<typeof IDEMPOTENCY> = {
  complete: (r) => (r.status === "ok" && r.waited ? { fence: r.fence } : undefined),
  fail: (r) => (r.status === "ok" ? { fence: r.fence } : undefined),
};

export async function completeIdempotency(request: ServiceRequest, key: string, token: string, response: unknown) {
  const ctx = serviceContextOf(request);
  const r = await idempotencyOf(ctx).complete(key, token, response, await ctx.ids.write(`idempotency:${key}:complete`, token));
  return { state: "completed" as const, completedAt: r.completedAt, fence: r.fence };
}

export async function failIdempotency(request: ServiceRequest, key: string, token: string) {
  const ctx = serviceContextOf(request);
  await idempotencyOf(ctx).fail(key, token, await ctx.ids.write(`idempotency:${key}:fail`, token));
  return { state: "absent" as const };
}

export const inspectIdempotency = (request: ServiceRequest, key: string) => idempotencyOf(serviceContextOf(request)).inspect(key);
