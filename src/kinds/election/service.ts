import { ELECTION } from "./types.js";
import type * as z from "zod/mini";
import { InvalidInputError, LeaseLostError, LockedError, NotHeldError } from "../../errors.js";
import { lockObjectClient } from "../../lockObject/lockObjectClient.js";
import { type AcquireAnswer, type AcquireSteps, acquireFlow } from "../../service/acquireFlow.js";
import type { ServiceContext, ServiceRequest } from "../../service/ServiceContext.js";
import type { WriteNotes } from "../../service/ServiceKind.js";
import { kindOps } from "../../store/types.js";
import { positionOf } from "../../validation.js";
import type { MutexGrant } from "../mutex/types.js";
import { leaderIn, leaderOf } from "./leader.js";
import { type campaignBody, leadership } from "./schemas.js";
import { serviceContextOf } from "../../service/requestContext.js";

/**
 * An election as the HTTP API serves it: call the store, then tell the lock
 * object, as the mutex's service does (its rules are the mutex's). On the
 * Redis store an uncontended campaign, heartbeat, proclaim or resign is one
 * round trip; the object is involved to wait in line, or when a resign
 * handed the term to the next in line.
 */
export type CampaignBody = z.output<typeof campaignBody>;

export async function campaign(request: ServiceRequest, name: string, body: CampaignBody, signal?: AbortSignal): Promise<AcquireAnswer<MutexGrant>> {
  const ctx = serviceContextOf(request);
  return acquireFlow(ctx, await campaignSteps(ctx, name, body), signal);
}

/** A campaign as the acquire flow runs it: one try in the store first (no barging past the line), then the line. */
async function campaignSteps(ctx: ServiceContext, name: string, body: CampaignBody): Promise<AcquireSteps<typeof ELECTION, MutexGrant>> {
  const ref = { ns: ctx.ns, name };
  const election = kindOps(ctx.store, ELECTION);
  const newToken = await ctx.ids.token(`election:${name}:campaign`);
  const write = await ctx.ids.write(`election:${name}:campaign`);
  // On the Durable store a try and a wait are both a call to the same object: wait at once unless told not to.
  const tryStoreFirst = body.waitMs === 0 || ctx.ids.fromClient || ctx.storeKind === "redis";
  return {
    kind: "election",
    ref,
    tryStore: tryStoreFirst
      ? async () => {
          const r = await election.acquire(ref, {
            token: newToken,
            mode: "new",
            ttlMs: body.ttlMs,
            ...write,
            watch: false,
            holder: body.value,
            lockDelayMs: body.lockDelayMs,
          });
          if (r.status === "granted") return r.grant;
          if (r.status === "lost") throw new LeaseLostError();
          if (body.waitMs === 0) throw new LockedError(r.retryAfterMs, undefined, r.current);
          return undefined;
        }
      : undefined,
    wait: {
      kind: "election",
      store: ctx.storeKind,
      ref,
      ttlMs: body.ttlMs,
      waitMs: body.waitMs,
      newToken,
      requestId: write.requestId,
      holder: body.value,
      lockDelayMs: body.lockDelayMs,
    },
    grantSchema: leadership,
    heartbeat: (token) => election.heartbeat(ref, { token }),
  };
}

export async function proclaim(request: ServiceRequest, name: string, token: string, value: string) {
  const ctx = serviceContextOf(request);
  const r = await kindOps(ctx.store, ELECTION).proclaim({ ns: ctx.ns, name }, { token, value });
  if (r.status === "lost") throw new LeaseLostError();
  return { term: r.fence, expiresAt: r.expiresAt, position: r.position };
}

export async function resign(request: ServiceRequest, name: string, token: string) {
  const ctx = serviceContextOf(request);
  const ref = { ns: ctx.ns, name };
  const r = await kindOps(ctx.store, ELECTION).release(ref, { token, ...(await ctx.ids.write(`election:${name}:resign`, token)) });
  if (r.status === "lost") throw new LeaseLostError();
  return { resigned: r.released };
}

/** The writes its lock object must hear of: a resign or a force release that ended a watched lease or handed the term on (the mutex's). */
export const electionNotes: WriteNotes<typeof ELECTION> = {
  release: (r, ref) => (r.status === "ok" && r.released && r.watched ? { ref, fence: r.fence, handedTo: r.handedTo } : undefined),
};

/** Who leads now: value, term, since and end of its lease, or nulls; and the line's length. */
export async function leader(request: ServiceRequest, name: string) {
  const ctx = serviceContextOf(request);
  const ref = { ns: ctx.ns, name };
  const [now, waiters] = await Promise.all([leaderIn(ctx.store, ref), lockObjectClient(ctx.env, "election", ref).waiterCount()]);
  return { ...now, waiters };
}

/**
 * The changes the election's history keeps (the last 64) after position `since` (all of them
 * without), oldest first, and who leads now. `since` as the query sent it: a whole number up to the
 * history's last position, else 400 invalid_position (an observer cannot have seen a position
 * that does not exist yet).
 */
export async function changes(request: ServiceRequest, name: string, since: string | undefined) {
  const ctx = serviceContextOf(request);
  const after = since === undefined ? 0 : positionOf(since);
  const view = await kindOps(ctx.store, ELECTION).observe({ ns: ctx.ns, name }, { since: after });
  if (after > view.position) {
    throw new InvalidInputError("invalid_position", `since ${after} is beyond the election's last position, ${view.position}`);
  }
  return { ...leaderOf(view), first: view.first, changes: view.changes };
}

/** An operator's force release: whoever leads steps down; the next in line leads, as after a resign. */
export async function forceResign(request: ServiceRequest, name: string, fence: number | undefined) {
  const ctx = serviceContextOf(request);
  const ref = { ns: ctx.ns, name };
  const write = await ctx.ids.write(`election:${name}:force-release`);
  const r = await kindOps(ctx.store, ELECTION).release(ref, { token: "", ...write, force: fence === undefined ? {} : { fence } });
  if (r.status === "lost") {
    throw new NotHeldError(fence === undefined ? `nobody leads the election ${name}` : `the election ${name} is not led by the term ${fence}`);
  }
  return { released: 1, fence: r.fence, holder: r.holder ?? null };
}
