import type { ServiceContext } from "../../service/ServiceContext.js";
import type { TokenOperation } from "../../wire/scopedToken.js";
import { heartbeatBody, heartbeatResponse, releaseBody } from "../../wire/schemas.js";
import type { SocketAt } from "../../wire/socketProtocol.js";
import { type Answer, type Operation, operation, type WaitSocketOperation } from "./operation.js";

/**
 * What the lease kinds' operations share: the heartbeat (the same body and
 * answer for every kind), the release body, a wait socket, and the error
 * statuses of a write and a read.
 */

// 403: a scoped token outside its scope (or a force release without an admin key) may meet any operation.
export const WRITE_ERRORS = [400, 401, 403, 409, 413, 429, 503];
export const READ_ERRORS = [400, 401, 403, 429, 503];

export const releaseRequest = ["ReleaseRequest", releaseBody] as const;

/** A lease's heartbeat at `step`: moves the lease's end; lease_lost when the caller no longer holds it. */
export function heartbeatOperation(
  step: string,
  operationId: string,
  summary: string,
  heartbeat: (ctx: ServiceContext, name: string, token: string, ttlMs: number | undefined) => Promise<unknown>,
): Operation {
  return operation({
    method: "post",
    step,
    operationId,
    summary,
    needs: ["heartbeat"],
    body: ["HeartbeatRequest", heartbeatBody],
    ok: [[200, "HeartbeatResponse", heartbeatResponse]],
    errors: WRITE_ERRORS,
    onLease: true,
    run: async (ctx, name, body): Promise<Answer> => ({ body: await heartbeat(ctx, name, body.token, body.ttlMs) }),
  });
}

/** The messages of a lock kind's wait socket. */
const LOCK_SOCKET_MESSAGES =
  'The client sends {"type":"acquire", ...the acquire body, waitMs >= 1}; the service answers {"type":"granted","grant":...}, the client {"type":"ack","token":...}, the service {"type":"held"}; or {"type":"timeout","retryAfterMs":n}, or {"type":"error","status":n,"error":...,"message":...}.';

/** A lock kind's wait socket at `step`: it acquires, so a scoped token must allow waits and acquires. */
export function lockWaitSocket(step: string, operationId: string, summary: string, at?: Pick<SocketAt, "mode">): WaitSocketOperation {
  return { step, operationId, summary, messages: LOCK_SOCKET_MESSAGES, needs: LOCK_WAIT_NEEDS, ...(at && { at }) };
}

const LOCK_WAIT_NEEDS: readonly TokenOperation[] = ["wait", "acquire"];
