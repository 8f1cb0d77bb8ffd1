import type * as z from "zod/mini";

/**
 * How a route that is not a kind's describes itself to the OpenAPI document
 * (openapi.ts): the operators', the tokens', the watch sockets'. A kind's
 * operations are values of their own (../operation.ts), made into these there.
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

/** What a wait socket's handshake may answer besides 101 (the wait's own errors come as messages). */
export const SOCKET_ERRORS = [400, 401, 403, 426, 429];
