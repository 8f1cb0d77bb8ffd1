import { InProgressError, LockedError } from "../errors.js";
import { type MetricEvent, writeMetric } from "../metrics.js";
import type { ServiceContext } from "./ServiceContext.js";

/**
 * An acquire or a begin, counted (src/metrics.ts) where every one goes
 * through, over HTTP and over a wait socket alike: an answer is a grant, a
 * busy one (locked, a run in progress) is busy, with the call's time (for a
 * wait, the wait). Nothing is counted for a client that left.
 */
export async function countAcquire<T>(ctx: ServiceContext, kind: string, run: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  const startedAt = Date.now();
  const count = (event: MetricEvent) => {
    if (!signal?.aborted) writeMetric(ctx.env, ctx.ns, kind, event, Date.now() - startedAt);
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
