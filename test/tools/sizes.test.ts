import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const src = path.resolve(import.meta.dirname, "../../src");

/** Every folder under src/, with the files directly in it (generated files left out: they are not read). */
function folders(dir: string): Array<{ dir: string; files: string[] }> {
  const entries = fs.readdirSync(dir, { withFileTypes: true });
  const files = entries.filter((e) => e.isFile() && !e.name.includes(".generated.")).map((e) => path.join(dir, e.name));
  return [{ dir, files }, ...entries.filter((e) => e.isDirectory()).flatMap((e) => folders(path.join(dir, e.name)))];
}

/**
 * The code stays a place a newcomer can find their way in (docs/DESIGN.md): a folder that
 * holds more than 15 files directly wants folders of its own, a file over 300 lines more than one job.
 */
describe("src/ stays small enough to read", () => {
  const all = folders(src);

  it("no folder holds more than 15 files directly", () => {
    const crowded = all.filter((f) => f.files.length > 15).map((f) => `${path.relative(src, f.dir) || "."}: ${f.files.length} files`);
    expect(crowded).toEqual([]);
  });

  it("no file is over 300 lines", () => {
    const long = all
      .flatMap((f) => f.files)
      .map((file) => ({ file, lines: fs.readFileSync(file, "utf8").split("\n").length - 1 }))
      .filter((f) => f.lines > 300)
      .map((f) => `${path.relative(src, f.file)}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });
});
