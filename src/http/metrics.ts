import type { MiddlewareHandler } from "hono";
import { HoldfastError } from "../errors.js";
import { type KindApi, operationAt } from "./kindApi.js";
import { isWaitSocket } from "./operations/operation.js";
import { type MetricEvent, writeMetric } from "../metrics.js";
import type { AppEnv } from "./appTypes.js";

/** What an answer was, for metrics: undefined when it is none of the counted events. */
function eventOf(method: string, pathname: string, status: number, error: string | undefined, apis: readonly KindApi[]): MetricEvent | undefined {
  if (method !== "POST") return undefined;
  if (pathname.endsWith("/force-release")) return status === 200 ? "force_release" : undefined;
  const op = operationAt(method, pathname, apis)?.op;
  return error === "lease_lost" && op && !isWaitSocket(op) && op.onLease ? "lease_lost" : undefined;
}

/**
 * With a Workers Analytics Engine binding (METRICS), each lease_lost and
 * force release over HTTP writes one data point (src/metrics.ts). Grants
 * and busy answers are counted by the acquire flow (src/service/acquireFlow.ts),
 * for HTTP and wait sockets alike, and an idempotency begin by its service;
 * lapses by the lock object. Without the binding nothing is done.
 * docs/metrics.md has the SQL.
 */
export function recordMetrics(apis: readonly KindApi[]): MiddlewareHandler<AppEnv> {
  /** The kind mounted at each /v1/<segment> (the kinds' mount points). */
  const kindOfSegment = new Map(apis.map((api) => [api.http.path.split("/")[2], api.name]));
  return async (c, next) => {
    const dataset = c.env.METRICS;
    if (!dataset) return next();
    const started = Date.now();
    await next();
    const pathname = c.req.path; // Hono's, already taken from the URL (no second parse)
    const kind = kindOfSegment.get(pathname.split("/")[2] ?? "");
    if (!kind) return;
    // An error answer's code: the typed error the app's error handler turned into it (Hono keeps it as c.error).
    const error = c.error instanceof HoldfastError ? c.error.code : undefined;
    const event = eventOf(c.req.method, pathname, c.res.status, error, apis);
    if (event) writeMetric(c.env, c.var.ns, kind, event, Date.now() - started);
  };
}
