import { setTimeout as sleep } from "node:timers/promises";

export { sleep };

export interface Bounds {
  /** Stop starting new iterations after this long. */
  ms: number;
  /** ...or after this many iterations, whichever comes first. */
  max: number;
}

export interface LoopResult {
  iterations: number;
  elapsedMs: number;
  /** Per-iteration durations in ms. */
  durations: number[];
  errors: number;
  firstError?: string;
}

/** Errors tolerated in one loop before it gives up (a benchmark, not a test). */
const MAX_ERRORS = 20;

/**
 * Runs `loops` copies of fn concurrently, each sequential, until the time or
 * the (shared) iteration bound is reached. fn gets the loop index.
 */
export async function runLoops(loops: number, bounds: Bounds, fn: (loop: number) => Promise<void>): Promise<LoopResult> {
  const t0 = performance.now();
  const stopAt = t0 + bounds.ms;
  const durations: number[] = [];
  let iterations = 0;
  let errors = 0;
  let firstError: string | undefined;
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      while (performance.now() < stopAt && iterations < bounds.max && errors < MAX_ERRORS) {
        iterations++;
        const s = performance.now();
        try {
          await fn(loop);
          durations.push(performance.now() - s);
        } catch (err) {
          errors++;
          firstError ??= err instanceof Error ? err.message : String(err);
        }
      }
    }),
  );
  return { iterations: durations.length, elapsedMs: performance.now() - t0, durations, errors, firstError };
}

/** Polls cond every `everyMs` until it holds; throws after timeoutMs. */
export async function until(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string, everyMs = 1): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Rejects after ms unless p settles first. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}
