import type { Env } from "./env.js";
import { InProgressError, LockedError } from "./errors.js";

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

/**
 * An acquire or a begin, counted where every one goes through (the acquire
 * flow over HTTP, the wait socket's acquire in the lock object): an answer
 * is a grant, a busy one (locked, a run in progress) is busy, with the
 * call's time (for a wait, the wait). Nothing is counted for a client that left.
 */
export async function countAcquire<T>(env: Pick<Env, "METRICS">, ns: string, kind: string, run: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  const startedAt = Date.now();
  const count = (event: MetricEvent) => {
    if (!signal?.aborted) writeMetric(env, ns, kind, event, Date.now() - startedAt);
  };
  try {
    const answer = await run();
    count("grant");
    return answer;
  } catch (err) {
    if (err instanceof LockedError || err instanceof InProgressError) count("busy");
    throw err;
  }
}
