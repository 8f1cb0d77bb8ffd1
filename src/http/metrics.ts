import type { MiddlewareHandler } from "hono";
import { HoldfastError } from "../errors.js";
import type { KindApi } from "./kindApi.js";
import { type MetricEvent, writeMetric } from "../metrics.js";
import type { AppEnv } from "./appTypes.js";

/** What an answer was, for metrics: undefined when it is none of the counted events. */
function eventOf(method: string, pathname: string, status: number, error: string | undefined): MetricEvent | undefined {
  if (method !== "POST") return undefined;
  const op = pathname.slice(pathname.lastIndexOf("/") + 1);
  if ((op === "heartbeat" || op === "release" || op === "complete" || op === "fail") && error === "lease_lost") return "lease_lost";
  if (op === "force-release" && status === 200) return "force_release";
  return undefined;
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
    const event = eventOf(c.req.method, pathname, c.res.status, error);
    if (event) writeMetric(c.env, c.var.ns, kind, event, Date.now() - started);
  };
}
