import type { Env } from "./env.js";

/** The events metrics count (docs/metrics.md). */
export type MetricEvent = "grant" | "busy" | "lease_lost" | "force_release" | "lapse" | "busy_concurrency" | "busy_rate";

/**
 * One data point to the Workers Analytics Engine dataset bound as METRICS,
 * if any: index the namespace, blob1 the kind, blob2 the event, double1 1,
 * double2 milliseconds (a grant's wait). Never throws: metrics never fail a
 * lock operation.
 */
export function writeMetric(env: Pick<Env, "METRICS">, ns: string, kind: string, event: MetricEvent, ms = 0): void {
  try {
    env.METRICS?.writeDataPoint({ indexes: [ns], blobs: [kind, event], doubles: [1, ms] });
  } catch {
    // A dataset that refuses a point changes nothing for the caller.
  }
}
