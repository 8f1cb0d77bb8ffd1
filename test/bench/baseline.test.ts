import { describe, expect, it } from "vitest";
import { compareFigures, comparisonVerdict, type Figure } from "../../bench/baseline";

/** The bench's comparison with its committed figures (bench/baseline.ts), on figures made up here. */
const fig = (name: string, value: number, better: Figure["better"] = "higher"): Figure => ({ name, value, unit: "/s", better, noise: 0.35 });
const all = () => true;

describe("bench baseline comparison", () => {
  it("a figure with no samples (NaN) is not measured, never within noise", () => {
    const c = compareFigures([fig("2. handoff p50", 10, "lower")], [fig("2. handoff p50", Number.NaN, "lower")], all);
    expect(c.notMeasured).toEqual(["2. handoff p50"]);
    expect(c.rows[0][4]).toMatch(/^NOT MEASURED/);
    expect(c.rows.flat().join(" ")).not.toMatch(/within noise/);
    expect(comparisonVerdict(c)).toMatch(/1 figure\(s\) not measured/);
  });

  it("a committed figure the run did not produce (table 1b without valgrind) is shown and counted", () => {
    const committed = [fig("1. lib x1 cycles/s", 700), fig("1b. lib Redis instructions per cycle", 214_800, "lower")];
    const c = compareFigures(committed, [fig("1. lib x1 cycles/s", 710)], all);
    expect(c.rows.map((r) => r[0])).toEqual(committed.map((f) => f.name));
    expect(c.rows[1][2]).toBe("not produced");
    expect(c.notMeasured).toEqual(["1b. lib Redis instructions per cycle"]);
    expect(c.missedAsked).toEqual(["1b. lib Redis instructions per cycle"]);
    expect(comparisonVerdict(c)).not.toMatch(/^no measured figure worse[^;]*$/);
  });

  it("only figures of the sections asked for (BENCH_ONLY) fail the run; 1b belongs to section 1", () => {
    const committed = [fig("1b. lib Redis instructions per cycle", 214_800, "lower"), fig("2. handoff p50", 10, "lower")];
    const c = compareFigures(committed, [], (section) => section === "1");
    expect(c.notMeasured).toHaveLength(2);
    expect(c.missedAsked).toEqual(["1b. lib Redis instructions per cycle"]);
  });

  it("measured figures keep their verdicts: worse beyond noise, better, within noise", () => {
    const committed = [fig("1. a", 100), fig("1. b", 100), fig("1. c", 100)];
    const c = compareFigures(committed, [fig("1. a", 50), fig("1. b", 200), fig("1. c", 90)], all);
    expect(c.rows.map((r) => r[4].split(" (")[0])).toEqual(["REGRESSION", "better", "within noise"]);
    expect(c.regressions).toBe(1);
    expect(c.notMeasured).toEqual([]);
    expect(comparisonVerdict(c)).toBe("1 figure(s) worse than their noise allows: REGRESSION");
  });
});
