import type * as z from "zod/mini";
import { InternalError } from "../errors.js";
import type { SocketAcquire } from "../lockObject/sockets/socketLine.js";
import type { WaitRequest } from "../lockObject/line/waitProtocol.js";
import type { KindName } from "../store/kinds.js";
import { kindOps } from "../store/types.js";
import { acquireFlow } from "./acquireFlow.js";
import { randomRequestIds } from "./requestIds.js";
import { followUpsWith, type ServiceContext } from "./ServiceContext.js";
import type { ServiceKind, SocketGrant } from "./ServiceKind.js";

/**
 * A wait socket's acquire, as the lock object runs it (handed in by
 * src/worker.ts): the service's view of the socket's lock, the kind's steps,
 * then the acquire flow, as an HTTP acquire goes. No client request id
 * reaches a socket, so its ids are fresh. A wait the object resumes after
 * it woke (checked when it began) goes into the line again the same way.
 */
export function socketAcquireOf(kinds: readonly ServiceKind[]): SocketAcquire {
  // Each kind's acquire by name, found once (every socket's acquire comes this way).
  const acquires = new Map(kinds.flatMap((k) => (k.service.socketAcquire ? [[k.name, k.service.socketAcquire] as const] : [])));
  return async (call, ask, signal) => {
    const kind = acquires.get(call.at.kind);
    if (!kind) throw new InternalError(`the ${call.at.kind} has no wait socket acquire`);
    const ctx: ServiceContext = {
      env: call.env,
      ns: call.at.ref.ns,
      store: call.store,
      ids: randomRequestIds,
      afterAnswer: followUpsWith(call.waitUntil),
      line: call.line,
    };
    const steps = "message" in ask ? await kind.steps(ctx, call.at, ask.message) : resumeSteps(ctx, call.at.kind, ask.resume, kind.grantSchema);
    return acquireFlow(ctx, steps, signal);
  };
}

/** A resumed wait's steps: into the line again, with the kind's grant schema and its heartbeat for a pickup the object cannot be told of. */
function resumeSteps(ctx: ServiceContext, kind: KindName, wait: WaitRequest, grantSchema: z.ZodMiniType<SocketGrant>) {
  return {
    kind,
    ref: wait.ref,
    wait,
    grantSchema,
    heartbeat: (token: string) => (kindOps(ctx.store, kind) as KindHeartbeat).heartbeat(wait.ref, { token }),
  };
}

/** What every waiting kind's store operations have in common for a resumed wait. */
type KindHeartbeat = { heartbeat(ref: { ns: string; name: string }, input: { token: string }): Promise<{ status: "ok" | "lost" }> };
