/**
 * The bench's key figures, compared with the last committed ones
 * (bench/baseline.json), so a change that makes things slower is flagged by
 * the run that shows it rather than noticed later by eye.
 *
 * Each figure says which way is better and how much it moves between runs on
 * an unchanged tree (its noise): Redis instructions per cycle (callgrind) are
 * deterministic to within ~2 %, so 3 % flags; wall-clock rates and latencies
 * on a shared 2-core machine move by a quarter or more between runs, so only
 * a larger change flags. `npm run bench -- --save-baseline` writes the file
 * from this run; commit it with the change it measures.
 */
import fs from "node:fs";

export interface Figure {
  name: string;
  value: number;
  unit: string;
  better: "lower" | "higher";
  /** A change beyond this fraction, the wrong way, is flagged. */
  noise: number;
}

interface Baseline {
  at: string;
  command: string;
  figures: Figure[];
}

const figures: Figure[] = [];

export function recordFigure(figure: Figure): void {
  figures.push(figure);
}

export function saveBaseline(file: string, command: string): void {
  const baseline: Baseline = { at: new Date().toISOString(), command, figures };
  fs.writeFileSync(file, `${JSON.stringify(baseline, null, 2)}\n`);
}

export interface Comparison {
  /** Rows: figure, baseline, now, change, verdict. */
  rows: string[][];
  regressions: number;
  baseline?: { at: string; command: string };
}

/** This run's figures against the committed ones (those both have). */
export function compareWithBaseline(file: string): Comparison {
  if (!fs.existsSync(file)) return { rows: [], regressions: 0 };
  const baseline = JSON.parse(fs.readFileSync(file, "utf8")) as Baseline;
  const rows: string[][] = [];
  let regressions = 0;
  for (const now of figures) {
    const then = baseline.figures.find((f) => f.name === now.name);
    if (!then || then.value === 0) continue;
    const change = (now.value - then.value) / then.value;
    const worse = now.better === "lower" ? change : -change;
    const verdict = worse > now.noise ? "REGRESSION" : -worse > now.noise ? "better" : "within noise";
    if (verdict === "REGRESSION") regressions++;
    rows.push([
      now.name,
      `${fmt(then.value)} ${now.unit}`,
      `${fmt(now.value)} ${now.unit}`,
      `${change >= 0 ? "+" : ""}${(change * 100).toFixed(1)} %`,
      `${verdict} (±${Math.round(now.noise * 100)} %)`,
    ]);
  }
  return { rows, regressions, baseline: { at: baseline.at, command: baseline.command } };
}

export const COMPARISON_HEADER = ["figure", "committed", "this run", "change", "verdict (noise)"];

function fmt(v: number): string {
  return v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(2);
}
