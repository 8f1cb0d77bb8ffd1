import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** What a row's report reads of each of its runs. */
export interface ReportedRun {
  target: string;
  faults: string[];
  notes: string[];
  firstError?: string;
  failures: string[];
}

/**
 * A row's runs (the flow and election rows) as printed and kept: its table, then each run's faults,
 * notes, first error and broken promises, written to chaos/results/<quick|latest>-<file>.md. The
 * runs and how many broke, for the suite's total.
 */
export function reportRows<R extends ReportedRun>(
  title: string,
  file: string,
  quick: boolean,
  rows: R[],
  table: (rows: R[]) => string,
): { runs: number; broken: number } {
  const notes = rows.flatMap((r) => [
    `- ${r.target}: under ${r.faults.join("; ")}`,
    ...r.notes.map((n) => `- ${r.target}: ${n}`),
    ...(r.firstError ? [`- ${r.target}: first error: ${r.firstError}`] : []),
    ...r.failures.map((f) => `- ${r.target}: BROKEN: ${f}`),
  ]);
  const out = [table(rows), "", ...notes].join("\n");
  console.log(out);
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${quick ? "quick" : "latest"}-${file}.md`), `# ${title} (${new Date().toISOString()})\n\n${out}\n`);
  return { runs: rows.length, broken: rows.filter((r) => r.failures.length).length };
}
