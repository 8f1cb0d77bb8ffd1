/** Nearest-rank percentile of unsorted samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (!samples.length) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  const n = samples.length;
  const mean = n ? samples.reduce((a, b) => a + b, 0) / n : NaN;
  return { n, p50: percentile(samples, 50), p99: percentile(samples, 99), mean, max: n ? Math.max(...samples) : NaN };
}

/** Milliseconds for a table: 2 decimals under 10, 1 under 100, none above. */
export function ms(v: number): string {
  if (!Number.isFinite(v)) return "—";
  return v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0);
}

/** A ratio such as requests per cycle. */
export function ratio(v: number | undefined, digits = 2): string {
  return v === undefined || !Number.isFinite(v) ? "—" : v.toFixed(digits);
}

export function int(v: number): string {
  return Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "—";
}
