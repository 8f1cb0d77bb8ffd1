/**
 * holdfast/hono: the Hono middleware that makes a route idempotent (also
 * exported from "holdfast").
 *
 *   import { idempotency, fromJsonBody } from "holdfast/hono";
 */
export { idempotency, type IdempotencyMiddlewareOptions } from "./middleware/idempotencyMiddleware.js";
export { fromHeader, fromJsonBody } from "./middleware/idempotencyKeyFrom.js";
