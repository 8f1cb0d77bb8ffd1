import type * as z from "zod/mini";
import { LeaseLostError } from "../errors.js";
import { lockObjectClient } from "../lockObject/lockObjectClient.js";
import type { KindKey, KindName, OpsOf } from "../store/kinds.js";
import { type AnsweredWrite, kindOps, type LockRef } from "../store/types.js";
import type { SocketAt } from "../wire/socketProtocol.js";
import { type AcquireAnswer, type AcquireSteps, acquireFlow } from "./acquireFlow.js";
import { recentlyContended, sawContended } from "./contention.js";
import { checkOnExpire } from "../wire/onExpireTarget.js";
import type { ServiceContext, ServiceRequest } from "./ServiceContext.js";
import { serviceContextOf } from "./requestContext.js";

/**
 * What every lease kind's service does alike, written once: a heartbeat, the
 * state with its line's count, an acquire over HTTP and on a wait socket. A
 * kind brings only what is its own (its acquire's steps, its release's answer).
 *
 * Call the store, then tell the lock object: on the Redis store an
 * uncontended acquire, heartbeat or release is one round trip and no object
 * call; the object is involved only to wait, to watch for onExpire, or to
 * hear of a write that moves its line. On the Durable store the store is the
 * object, which does both in one call.
 */

/** What the core reads of a lease kind's store operations. */
interface LeaseOps {
  heartbeat(
    ref: LockRef,
    input: { token: string; ttlMs?: number },
  ): Promise<{ status: "lost" } | { status: "ok"; expiresAt: number; ttlMs: number; fence: number }>;
  inspect(ref: LockRef): Promise<object>;
}

/** A lease kind's key: its name, with store operations that have a heartbeat and a state. */
export type LeaseKey = KindKey<KindName, LeaseOps, unknown, unknown>;

/**
 * A lease's heartbeat: its new end, or lease_lost. No object call: a lock
 * object waiting behind the lease wakes at its old end, reads the new one
 * from the store and sleeps again.
 */
export async function heartbeatLease(request: ServiceRequest, key: LeaseKey, name: string, token: string, ttlMs?: number) {
  const ctx = serviceContextOf(request);
  const r = await kindOps(ctx.store, key).heartbeat({ ns: ctx.ns, name }, { token, ttlMs });
  if (r.status === "lost") throw new LeaseLostError();
  return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
}

/** A lock's state as GET answers it (without its name): the store's, with its line's count from the lock object. */
export async function stateWithWaiters(request: ServiceRequest, key: LeaseKey, name: string): Promise<Record<string, unknown>> {
  const ctx = serviceContextOf(request);
  const ref = { ns: ctx.ns, name };
  const [state, waiters] = await Promise.all([kindOps(ctx.store, key).inspect(ref), lockObjectClient(ctx.env, key.name, ref).waiterCount()]);
  return { ...state, waiters };
}

/**
 * An acquire's ids, made by the core before the kind's steps, under "<kind>:<name>:acquire" (with a
 * mode, "<kind>:<name>:<mode>/acquire"): a new token unless it re-enters with its own, and the
 * request id its write is remembered under (both from the client's request id when it sent one).
 */
interface AcquireIds {
  reenter: boolean;
  newToken: string | undefined;
  write: AnsweredWrite;
}

/** The ids of an acquire whose body holds no token (it cannot re-enter): a new token always. */
type IdsOf<Body> = "token" extends keyof Body ? AcquireIds : AcquireIds & { reenter: false; newToken: string };

async function acquireIds(ctx: ServiceContext, label: string, token: string | undefined): Promise<AcquireIds> {
  const newToken = token === undefined ? await ctx.ids.token(label) : undefined;
  return { reenter: token !== undefined, newToken, write: await ctx.ids.write(label, token) };
}

/** An acquire body as the core reads it (its onExpire target is checked before anything else; a held token re-enters). */
type AcquireBody = { ttlMs: number; waitMs: number; onExpire?: string; holder?: string; token?: string };

/**
 * A lease kind's acquire, as it declares it: the body (HTTP's and the wait socket's acquire message), the
 * grant, and its one try in the store. The core does the rest alike for every kind: the ids, whether to
 * try first, the request to the lock object's line (the body as it came, with the path's mode and the
 * ids: the same request a wait socket's acquire message makes), and the answer's delivery.
 */
export interface LeaseAcquireOf<K extends KindKey, Body extends AcquireBody, Grant extends { token: string; ttlMs: number }> {
  key: K & LeaseKey;
  body: z.ZodMiniType<Body, unknown>;
  grant: z.ZodMiniType<Grant>;
  /**
   * One try in the store, on the kind's operations there (`ops`, the request's view of them), with the
   * ids the core made for it; `mode` is the path's (a read-write lock's read or write). The grant, or
   * undefined to wait in the line; it throws what the caller gets instead (busy with no wait, a lost
   * lease, a refusal).
   */
  tryStore(ctx: ServiceContext, ops: OpsOf<K>, ref: LockRef, body: Body, mode: SocketAt["mode"], ids: IdsOf<Body>): Promise<Grant | undefined>;
  /**
   * A waiter skips the try on the Durable store (the line's first try is the same call to the same
   * object) and on a lock this isolate saw contended a moment ago (contention.ts), unless it re-enters,
   * only tries (waitMs 0) or came with its own request id (its earlier grant may be in the store).
   */
  lineFirst?: boolean;
}

/** A lease kind's acquire, as HTTP and the wait socket run it. */
export interface LeaseAcquire {
  body: z.ZodMiniType;
  grant: z.ZodMiniType;
  /** An HTTP acquire: the flow, with the body its schema checked. */
  run(request: ServiceRequest, name: string, body: unknown, mode: SocketAt["mode"], signal: AbortSignal): Promise<AcquireAnswer<unknown>>;
}

/** The one acquire of a lease kind, for HTTP and its wait socket alike (the acquire flow runs both). */
export function leaseAcquire<K extends KindKey, Body extends AcquireBody, Grant extends { token: string; ttlMs: number }>(
  acquire: LeaseAcquireOf<K, Body, Grant>,
): LeaseAcquire {
  const { key, grant } = acquire;
  const steps = async (ctx: ServiceContext, name: string, body: Body, mode: SocketAt["mode"]): Promise<AcquireSteps<K, Grant>> => {
    const { onExpire, waitMs } = body;
    if (onExpire) checkOnExpire(ctx.env, ctx.ns, onExpire);
    const ref = { ns: ctx.ns, name };
    const ids = await acquireIds(ctx, `${key.name}:${name}:${mode ? `${mode}/` : ""}acquire`, body.token);
    const lock = `${ctx.storeKind}:${key.name}:${ctx.ns}:${name}`;
    // Only a kind that goes to the line first reads (and so keeps) which locks were contended lately.
    const contended = acquire.lineFirst === true ? () => sawContended(lock) : undefined;
    const lineFirst =
      contended !== undefined && !ids.reenter && waitMs > 0 && !ctx.ids.fromClient && (ctx.storeKind !== "redis" || recentlyContended(lock));
    return {
      kind: key.name,
      ref,
      // The body as it came, with the path's mode and the ids: what a wait socket's acquire message asks too.
      wait: {
        ...body,
        kind: key.name,
        store: ctx.storeKind,
        ref,
        ...(mode ? { mode } : {}),
        newToken: ids.newToken,
        requestId: ids.write.requestId,
      } as AcquireSteps<K, Grant>["wait"],
      // A grant with a watch is made by the lock object: no try in the store first.
      tryStore:
        onExpire === undefined && !lineFirst
          ? async () => {
              const granted = await acquire.tryStore(ctx, kindOps(ctx.store, key), ref, body, mode, ids as IdsOf<Body>);
              if (!granted) contended?.(); // held: the line next (it registers the waiter for the handoff)
              return granted;
            }
          : undefined,
      grantSchema: grant,
      heartbeat: (token) => kindOps(ctx.store, key).heartbeat(ref, { token }),
      fromLine: contended,
    };
  };
  return {
    body: acquire.body,
    grant,
    run: async (request, name, body, mode, signal) => {
      const ctx = serviceContextOf(request);
      return acquireFlow(ctx, await steps(ctx, name, body as Body, mode), signal);
    },
  };
}
