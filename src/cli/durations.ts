const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A human duration in ms: `500ms`, `30s`, `5m`, `2h`, `1d`, or a bare number
 * of seconds (as flock's -w takes). Undefined when it is none of those.
 */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * UNITS[m[2] ?? "s"];
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** A duration for people: 1500 → "1.5s", 120000 → "2m". */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    if (ms >= size) return `${Number((ms / size).toFixed(1))}${unit}`;
  }
  return `${ms}ms`;
}
