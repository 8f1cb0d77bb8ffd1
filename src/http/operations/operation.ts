import type * as z from "zod/mini";
import type { ServiceRequest } from "../../service/ServiceContext.js";
import type { TokenOperation } from "../../wire/scopedToken.js";
import type { SocketAt } from "../../wire/socketProtocol.js";
import type { GrantDelivery } from "../../lockObject/waitInLine.js";
import type { Named, Op } from "../openapi/openapiOps.js";

/**
 * One operation of a kind, as one value: everything the HTTP API derives
 * from it. A kind lists its operations in src/kinds/<kind>/operations.ts;
 * from that list the core makes the Hono route with its validation
 * (operationRoutes.ts), the OpenAPI operation (openapi/openapi.ts), what a
 * scoped token must allow (access/scopedTokens.ts) and the metrics event
 * (metrics.ts). The app names no operation.
 */
export interface Operation {
  method: "get" | "post";
  /** Its path after the name ("acquire", "read/acquire"; "" for the name itself, as GET /v1/locks/{name}). */
  step: string;
  operationId: string;
  summary: string;
  /** The operations a scoped token must allow to call it (docs/API.md, "Scoped tokens"). */
  needs: readonly TokenOperation[];
  /** The request body: its component name in the document and its schema, checked before `run`. */
  body?: Named;
  /** Its success answers in the document (begin: 201 started, then 200 completed). */
  ok: readonly [status: number, ...Named][];
  /** Error statuses besides 500, which every operation may answer. */
  errors: readonly number[];
  /** An answer `lease_lost` from it is counted as the metrics event lease_lost (a write on a lease the caller held). */
  onLease?: true;
  /** Its query parameters, for the document; `run` is given them as sent, and checks them itself. */
  query?: Op["query"];
  /** The call: the checked name and body, the request's signal (a wait ends when its client hangs up), the query's parameters. */
  run(request: ServiceRequest, name: string, body: unknown, signal: AbortSignal, query: Record<string, string>): Promise<Answer>;
}

/** What an operation answers: its body, its status (200 unless said), and for a grant from the line its delivery. */
export interface Answer {
  body: unknown;
  status?: 200 | 201;
  /** A grant from the line is confirmed once its answer went out whole (deliveryConfirmed.ts). */
  delivery?: GrantDelivery;
}

/** A kind's wait socket (GET with Upgrade: websocket): the lock object speaks the wait protocol on it. */
export interface WaitSocketOperation {
  method?: undefined;
  /** Its path after the name ("wait"; a read-write lock's "read/wait"). */
  step: string;
  operationId: string;
  summary: string;
  /** What its messages are, for the document's 101 answer. */
  messages: string;
  /** What a scoped token must allow to open it (a lock's acquires; an idempotency key's only waits). */
  needs: readonly TokenOperation[];
  /** What it tells the lock object of the socket (a read-write lock's mode). */
  at?: Pick<SocketAt, "mode">;
  /** How to wait without the socket, for the 426 a plain GET of its path gets (unset: a lock's POST .../acquire). */
  withoutSocket?: string;
}

/**
 * An operation whose body is checked by `body`'s schema, with `run` typed by it. The value is an
 * Operation like any other: the type of its body is known here, where the schema is.
 */
export function operation<S extends z.ZodMiniType = z.ZodMiniType<undefined>>(
  op: Omit<Operation, "body" | "run"> & {
    body?: readonly [id: string, schema: S];
    run(request: ServiceRequest, name: string, body: z.output<S>, signal: AbortSignal, query: Record<string, string>): Promise<Answer>;
  },
): Operation {
  return op as Operation;
}

/** A kind's list: its calls and its wait sockets, in the order the OpenAPI document lists them. */
export type KindOperations = readonly (Operation | WaitSocketOperation)[];

export const isWaitSocket = (op: Operation | WaitSocketOperation): op is WaitSocketOperation => op.method === undefined;

/** A wait socket, typed as one (its `needs` checked against the token operations). */
export const waitSocket = (op: Omit<WaitSocketOperation, "method">): WaitSocketOperation => op;
