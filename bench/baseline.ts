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
 *
 * A figure that is not a finite number (a row with no samples has p50 NaN)
 * or a committed figure this run did not produce (table 1b without valgrind)
 * is "not measured": never "within noise", always counted, and a run that
 * was asked for its section fails (`missedAsked`).
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
  /** Figures with no finite value this run: non-finite, or committed and not produced. */
  notMeasured: string[];
  /** Those of notMeasured whose section the run was asked for (BENCH_ONLY, or every section). */
  missedAsked: string[];
}

/** The bench section a figure belongs to: "1" for "1. ..." and "1b. ..." (table 1b is measured by section 1). */
export function sectionOf(name: string): string {
  return /^(\d+)/.exec(name)?.[1] ?? "";
}

export const NOT_MEASURED = "NOT MEASURED";

/**
 * This run's figures against the committed ones. `asked` says whether the
 * run was asked for a section; a committed figure of a section it was not
 * asked for is still shown as not measured, but does not fail the run.
 */
export function compareFigures(committed: readonly Figure[], now: readonly Figure[], asked: (section: string) => boolean): Comparison {
  const rows: string[][] = [];
  const notMeasured: string[] = [];
  let regressions = 0;
  const names = [...new Set([...committed.map((f) => f.name), ...now.map((f) => f.name)])];
  for (const name of names) {
    const then = committed.find((f) => f.name === name);
    const cur = now.find((f) => f.name === name);
    const spec = cur ?? (then as Figure);
    const thenCell = then && Number.isFinite(then.value) ? `${fmt(then.value)} ${spec.unit}` : "—";
    const noise = `(±${Math.round(spec.noise * 100)} %)`;
    if (!cur || !Number.isFinite(cur.value)) {
      notMeasured.push(name);
      rows.push([name, thenCell, cur ? "—" : "not produced", "—", `${NOT_MEASURED} ${noise}`]);
      continue;
    }
    if (!then || !Number.isFinite(then.value) || then.value === 0) {
      rows.push([name, thenCell, `${fmt(cur.value)} ${spec.unit}`, "—", "no committed figure"]);
      continue;
    }
    const change = (cur.value - then.value) / then.value;
    const worse = cur.better === "lower" ? change : -change;
    const verdict = worse > cur.noise ? "REGRESSION" : -worse > cur.noise ? "better" : "within noise";
    if (verdict === "REGRESSION") regressions++;
    rows.push([name, thenCell, `${fmt(cur.value)} ${spec.unit}`, `${change >= 0 ? "+" : ""}${(change * 100).toFixed(1)} %`, `${verdict} ${noise}`]);
  }
  return { rows, regressions, notMeasured, missedAsked: notMeasured.filter((n) => asked(sectionOf(n))) };
}

/** The footer line: what got worse and what was not measured, both counted. */
export function comparisonVerdict(c: Comparison): string {
  const parts = [
    c.regressions ? `${c.regressions} figure(s) worse than their noise allows: REGRESSION` : "no measured figure worse than its noise allows",
  ];
  if (c.notMeasured.length) {
    parts.push(
      `${c.notMeasured.length} figure(s) not measured${c.missedAsked.length ? `, ${c.missedAsked.length} of them in sections this run was asked for` : " (sections not asked for)"}`,
    );
  }
  return parts.join("; ");
}

/** This run's recorded figures against the committed file, if there is one. */
export function compareWithBaseline(
  file: string,
  asked: (section: string) => boolean,
): (Comparison & { baseline: { at: string; command: string } }) | undefined {
  if (!fs.existsSync(file)) return undefined;
  const baseline = JSON.parse(fs.readFileSync(file, "utf8")) as Baseline;
  return { ...compareFigures(baseline.figures, figures, asked), baseline: { at: baseline.at, command: baseline.command } };
}

export const COMPARISON_HEADER = ["figure", "committed", "this run", "change", "verdict (noise)"];

function fmt(v: number): string {
  return v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(2);
}
