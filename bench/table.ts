import { recordTable } from "./results";

/** Prints an aligned text table: first column left-aligned, the rest right-aligned (and keeps it for bench/results/). */
export function printTable(title: string, header: string[], rows: string[][], notes: string[] = []): void {
  recordTable({ title, header, rows, notes });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? (c ?? "").padEnd(widths[i]) : (c ?? "").padStart(widths[i])))
      .join("  ")
      .trimEnd();
  const out = [title, line(header), widths.map((w) => "-".repeat(w)).join("  ")];
  for (const r of rows) out.push(line(r));
  for (const n of notes) out.push(`  ${n}`);
  console.log(`\n${out.join("\n")}`);
}
