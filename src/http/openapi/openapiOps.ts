import type * as z from "zod/mini";
import { heartbeatBody, heartbeatResponse, releaseBody } from "../../wire/schemas.js";

/**
 * How a route describes itself to the OpenAPI document (openapi.ts): each
 * kind lists its operations in src/kinds/<kind>/openapi.ts with these.
 */

/** A schema and its component name. */
export type Named = [id: string, schema: z.ZodMiniType];

export interface Op {
  operationId: string;
  summary: string;
  body?: Named;
  /** The success answer; a wait socket has none but its 101 (see `socket`). */
  ok?: [status: number, ...Named];
  /** A wait socket: the 101 Switching Protocols answer's description (its messages are in docs/API.md). */
  socket?: string;
  /** Further success statuses (begin: 201 started, 200 completed). */
  alsoOk?: Array<[status: number, ...Named]>;
  /** Error statuses besides 500, which every operation may answer. */
  errors: number[];
  /** Query parameters (a listing's prefix, limit, cursor). */
  query?: Array<{ name: string; description: string; schema: object }>;
}

/** Path (relative to the kind's mount point) -> method -> operation. */
export type Operations = Record<string, Record<string, Op>>;

// 403: a scoped token outside its scope (or a force release without an admin key) may meet any operation.
export const WRITE_ERRORS = [400, 401, 403, 409, 413, 429, 503];
export const READ_ERRORS = [400, 401, 403, 429, 503];

/** A lease's heartbeat: the same body and answer for every kind. */
export const heartbeatOp = (operationId: string, summary: string): Op => ({
  operationId,
  summary,
  body: ["HeartbeatRequest", heartbeatBody],
  ok: [200, "HeartbeatResponse", heartbeatResponse],
  errors: WRITE_ERRORS,
});

export const releaseRequest: Named = ["ReleaseRequest", releaseBody];

/** What a wait socket's handshake may answer besides 101 (the wait's own errors come as messages). */
export const SOCKET_ERRORS = [400, 401, 403, 426, 429];

/** A kind's wait socket: GET with Upgrade: websocket, answered 101 (docs/API.md, "Waiting over a WebSocket"). */
export const waitSocketOp = (operationId: string, summary: string, messages: string): Op => ({
  operationId,
  summary,
  socket: `Switching Protocols: a wait socket (subprotocol holdfast.v1). ${messages} The messages are specified in docs/API.md, "Waiting over a WebSocket".`,
  errors: SOCKET_ERRORS,
});

/** The messages of a lock kind's wait socket. */
export const LOCK_SOCKET_MESSAGES =
  'The client sends {"type":"acquire", ...the acquire body, waitMs >= 1}; the service answers {"type":"granted","grant":...}, the client {"type":"ack","token":...}, the service {"type":"held"}; or {"type":"timeout","retryAfterMs":n}, or {"type":"error","status":n,"error":...,"message":...}.';
