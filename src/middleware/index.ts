/** The library's Hono middleware: a route made idempotent by a key the request carries. */
export { idempotency, type IdempotencyMiddlewareOptions } from "./idempotencyMiddleware.js";
export { fromHeader, fromJsonBody } from "./idempotencyKeyFrom.js";
