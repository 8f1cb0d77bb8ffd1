import type * as z from "zod/mini";
import type { ServiceRequest } from "../../service/ServiceContext.js";
import { heartbeatLease, type LeaseAcquire, type LeaseKey, stateWithWaiters } from "../../service/leases.js";
import type { TokenOperation } from "../../wire/scopedToken.js";
import type { SocketAt } from "../../wire/socketProtocol.js";
import { heartbeatBody, heartbeatResponse, releaseBody } from "../../wire/schemas.js";
import { type Named, READ_ERRORS, WRITE_ERRORS } from "../openapi/openapiOps.js";
import { type Operation, operation, type WaitSocketOperation } from "./operation.js";

/**
 * The operations every lease kind has, made from what is its own: the
 * acquire (its body, grant and steps), the wait socket, the heartbeat (the
 * same body and answer for every kind), the release (its answer and call)
 * and the GET of its state. Their operationIds are the kind's name and the
 * operation's ("mutexAcquire", with a mode "rwlockReadAcquire"), their
 * schemas' names in the document the kind's `names` and the answer's
 * ("MutexGrant", "MutexReleaseResponse", "MutexState").
 */

/** A lease kind as its operations name it: its key, and what its schemas' names in the document start with ("Mutex"). */
export interface LeaseNames {
  key: LeaseKey;
  names: string;
}

/**
 * A lease kind's operations at one mode's steps ("read/acquire"; without a mode, "acquire"), each
 * with its summary, in the document's order: acquire, wait socket, heartbeat, release, GET of one.
 */
export interface LeaseOperationsOf extends LeaseNames {
  /** The mode its steps name, if any: the lock object hears it from the wait socket. */
  mode?: Mode;
  acquire?: [summary: string, acquire: LeaseAcquire];
  wait?: string;
  heartbeat?: string;
  release?: ReleaseOf;
  /** Its state's summary and schema (a lock's: its name, the store's state, its line's count). */
  inspect?: [summary: string, state: z.ZodMiniType];
}

/** A release: its summary, its answer's schema, its call (with the path's mode, if any). */
type ReleaseOf = [
  summary: string,
  answer: z.ZodMiniType,
  run: (request: ServiceRequest, name: string, token: string, mode?: Mode) => Promise<unknown>,
];

/** A mode a lease kind's paths may name (a read-write lock's "read" or "write"): the lock object hears it from its wait socket. */
type Mode = NonNullable<SocketAt["mode"]>;

/** The step of an operation at a mode, and its operationId. */
function placed(kind: LeaseNames, mode: Mode | undefined, step: string, id: string) {
  const Mode = mode ? mode[0].toUpperCase() + mode.slice(1) : "";
  return { step: mode ? `${mode}/${step}` : step, operationId: `${kind.key.name}${Mode}${id}` };
}

/** A lease kind's operations, those it names, at one mode (or none). */
export function leaseOperations(kind: LeaseOperationsOf): (Operation | WaitSocketOperation)[] {
  const { mode, acquire, wait, heartbeat, release, inspect } = kind;
  return [
    ...(acquire ? [acquireOperation(kind, acquire, mode)] : []),
    ...(wait ? [lockWaitSocket(kind, wait, mode)] : []),
    ...(heartbeat ? [heartbeatOperation(kind, heartbeat, mode)] : []),
    ...(release ? [releaseOperation(kind, release, mode)] : []),
    ...(inspect ? [inspectOperation(kind, ...inspect)] : []),
  ];
}

function acquireOperation(kind: LeaseNames, [summary, acquire]: [string, LeaseAcquire], mode?: Mode): Operation {
  return operation({
    method: "post",
    ...placed(kind, mode, "acquire", "Acquire"),
    summary,
    needs: ["acquire"],
    body: [`${kind.names}AcquireRequest`, acquire.body],
    ok: [[200, `${kind.names}Grant`, acquire.grant]],
    errors: WRITE_ERRORS,
    run: async (request, name, body, signal) => {
      const { grant, delivery } = await acquire.run(request, name, body, mode, signal);
      return { body: grant, delivery };
    },
  });
}

/** A lease's heartbeat: moves the lease's end; lease_lost when the caller no longer holds it. */
export function heartbeatOperation(kind: LeaseNames, summary: string, mode?: Mode): Operation {
  return operation({
    method: "post",
    ...placed(kind, mode, "heartbeat", "Heartbeat"),
    summary,
    needs: ["heartbeat"],
    body: ["HeartbeatRequest", heartbeatBody],
    ok: [[200, "HeartbeatResponse", heartbeatResponse]],
    errors: WRITE_ERRORS,
    onLease: true,
    run: async (request, name, body) => ({ body: await heartbeatLease(request, kind.key, name, body.token, body.ttlMs) }),
  });
}

/** A lease's release; lease_lost when the caller no longer holds it. */
function releaseOperation(kind: LeaseNames, [summary, answer, run]: ReleaseOf, mode?: Mode): Operation {
  return leaseEndOperation(kind, {
    ...placed(kind, mode, "release", "Release"),
    summary,
    body: ["ReleaseRequest", releaseBody],
    ok: [`${kind.names}ReleaseResponse`, answer],
    run: (request, name, body) => run(request, name, body.token, mode),
  });
}

/**
 * A write that ends the caller's lease (a release; an idempotency key's complete or fail): a
 * scoped token must allow releases, and its lease_lost is the metrics event. Its operationId is
 * the kind's name and its step's ("idempotencyComplete").
 */
export function leaseEndOperation<S extends z.ZodMiniType>(
  kind: LeaseNames,
  op: {
    step: string;
    operationId?: string;
    summary: string;
    body: readonly [string, S];
    ok: Named;
    run: (request: ServiceRequest, name: string, body: z.output<S>) => Promise<unknown>;
  },
): Operation {
  const { step, summary, body, ok, run } = op;
  const operationId = op.operationId ?? `${kind.key.name}${step[0].toUpperCase()}${step.slice(1)}`;
  return operation({
    method: "post",
    step,
    operationId,
    summary,
    needs: ["release"],
    body,
    ok: [[200, ...ok]],
    errors: WRITE_ERRORS,
    onLease: true,
    run: async (request, name, b) => ({ body: await run(request, name, b) }),
  });
}

/** GET of one: its state, as `state` answers it; a lock's by default: its name, the store's state, its line's count. */
export function inspectOperation(
  kind: LeaseNames,
  summary: string,
  schema: z.ZodMiniType,
  state = async (request: ServiceRequest, name: string): Promise<object> => ({ name, ...(await stateWithWaiters(request, kind.key, name)) }),
): Operation {
  return operation({
    method: "get",
    ...placed(kind, undefined, "", "Inspect"),
    summary,
    needs: ["inspect"],
    ok: [[200, `${kind.names}State`, schema]],
    errors: READ_ERRORS,
    run: async (request, name) => ({ body: await state(request, name) }),
  });
}

/** The messages of a lock kind's wait socket. */
const LOCK_SOCKET_MESSAGES =
  'The client sends {"type":"acquire", ...the acquire body, waitMs >= 1}; the service answers {"type":"granted","grant":...}, the client {"type":"ack","token":...}, the service {"type":"held"}; or {"type":"timeout","retryAfterMs":n}, or {"type":"error","status":n,"error":...,"message":...}.';

const LOCK_WAIT_NEEDS: readonly TokenOperation[] = ["wait", "acquire"];

/** A lock kind's wait socket: it acquires, so a scoped token must allow waits and acquires; its mode goes to the lock object. */
export function lockWaitSocket(kind: LeaseNames, summary: string, mode?: Mode): WaitSocketOperation {
  return { ...placed(kind, mode, "wait", "Wait"), summary, messages: LOCK_SOCKET_MESSAGES, needs: LOCK_WAIT_NEEDS, ...(mode && { at: { mode } }) };
}
