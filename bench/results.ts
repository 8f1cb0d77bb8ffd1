/**
 * Everything the bench prints, kept as data too, and written at the end to
 * bench/results/: latest.md (the tables), latest.json (the same, with the
 * header facts) and latest-handoff.svg (a chart of table 2), so two runs can
 * be compared side by side. The files are overwritten by the next run;
 * compare figures only within one run on a noisy machine.
 */
import fs from "node:fs";
import path from "node:path";

export interface Table {
  title: string;
  header: string[];
  rows: string[][];
  notes: string[];
}

export interface HandoffBar {
  label: string;
  p50: number;
  p99: number;
  max: number;
}

const tables: Table[] = [];
const facts: string[] = [];
let handoffBars: HandoffBar[] = [];

export function recordTable(table: Table): void {
  tables.push(table);
}

export function recordFact(line: string): void {
  facts.push(line);
}

export function recordHandoff(bars: HandoffBar[]): void {
  handoffBars = bars;
}

export function writeResults(dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true });
  const md = [
    "# holdfast bench results",
    "",
    "```",
    ...facts,
    "```",
    "",
    ...tables.flatMap((t) => [
      `## ${t.title}`,
      "",
      `| ${t.header.join(" | ")} |`,
      `|${t.header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
      ...t.rows.map((r) => `| ${r.join(" | ")} |`),
      "",
      ...t.notes.map((n) => `> ${n.trim()}`),
      "",
    ]),
  ].join("\n");
  const files = [path.join(dir, "latest.md"), path.join(dir, "latest.json")];
  fs.writeFileSync(files[0], md);
  fs.writeFileSync(files[1], `${JSON.stringify({ facts, tables, handoff: handoffBars }, null, 2)}\n`);
  if (handoffBars.length) {
    files.push(path.join(dir, "latest-handoff.svg"));
    fs.writeFileSync(files[2], handoffSvg(handoffBars));
  }
  return files;
}

/** Horizontal bars per target: p50 (solid), p99 (lighter), max (a tick), on one millisecond scale. */
function handoffSvg(bars: HandoffBar[]): string {
  const rowH = 28;
  const left = 330;
  const width = 900;
  const top = 40;
  const scaleMax = Math.max(1, ...bars.map((b) => (Number.isFinite(b.max) ? b.max : b.p99)).filter(Number.isFinite));
  const x = (v: number) => left + (Math.min(v, scaleMax) / scaleMax) * (width - left - 40);
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const rows = bars.map((b, i) => {
    const y = top + i * rowH;
    const parts = [`<text x="${left - 8}" y="${y + 16}" text-anchor="end" font-size="12">${esc(b.label)}</text>`];
    if (Number.isFinite(b.p99)) parts.push(`<rect x="${left}" y="${y + 4}" width="${x(b.p99) - left}" height="16" fill="#9ecae1"/>`);
    if (Number.isFinite(b.p50)) parts.push(`<rect x="${left}" y="${y + 4}" width="${x(b.p50) - left}" height="16" fill="#3182bd"/>`);
    if (Number.isFinite(b.max)) parts.push(`<line x1="${x(b.max)}" x2="${x(b.max)}" y1="${y + 2}" y2="${y + 22}" stroke="#333"/>`);
    parts.push(
      `<text x="${x(Number.isFinite(b.p99) ? b.p99 : 0) + 6}" y="${y + 16}" font-size="11">p50 ${b.p50.toFixed(1)} · p99 ${b.p99.toFixed(1)} ms</text>`,
    );
    return parts.join("");
  });
  const height = top + bars.length * rowH + 30;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">`,
    `<text x="10" y="22" font-size="14" font-weight="bold">Handoff latency, release -> next waiter granted (ms; dark p50, light p99, tick max)</text>`,
    ...rows,
    `<text x="${left}" y="${height - 8}" font-size="11">0</text><text x="${width - 40}" y="${height - 8}" font-size="11" text-anchor="end">${scaleMax.toFixed(0)} ms</text>`,
    "</svg>",
    "",
  ].join("\n");
}
