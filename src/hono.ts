/**
 * holdfast/hono: the Hono middleware that makes a route idempotent (also
 * exported from "holdfast").
 *
 *   import { fromJsonBody } from "holdfast/hono";
 */
export * from "./middleware/index.js";
