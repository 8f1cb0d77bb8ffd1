import type * as z from "zod/mini";
import { heartbeatBody, heartbeatResponse, releaseBody } from "./schemas.js";

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
  ok: [status: number, ...Named];
  /** Further success statuses (begin: 201 started, 200 completed). */
  alsoOk?: Array<[status: number, ...Named]>;
  /** Error statuses besides 500, which every operation may answer. */
  errors: number[];
}

/** Path (relative to the kind's mount point) -> method -> operation. */
export type Operations = Record<string, Record<string, Op>>;

export const WRITE_ERRORS = [400, 401, 409, 413, 429, 503];
export const READ_ERRORS = [400, 401, 429, 503];

/** A lease's heartbeat: the same body and answer for every kind. */
export const heartbeatOp = (operationId: string, summary: string): Op => ({
  operationId,
  summary,
  body: ["HeartbeatRequest", heartbeatBody],
  ok: [200, "HeartbeatResponse", heartbeatResponse],
  errors: WRITE_ERRORS,
});

export const releaseRequest: Named = ["ReleaseRequest", releaseBody];
