import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The conformance files: a line each, and the longest of the suite to run. */
const CONFORMANCE = /\/test\/conformance\/[^/]+\.workers\.test\.ts$/;

/**
 * The order test files start in: longest first over both projects, so that
 * the files still starting at the end are short ones and no long file runs
 * on alone after the rest. Vitest's own order starts every file of one
 * project before any of the next and, with no timings from an earlier run
 * (a fresh clone), larger files first, which started the conformance files
 * last of all. Here: by the file's duration in the last run; with none
 * known, the conformance files first, then Vitest's order.
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const expected = new Map(
      ordered.map((spec) => [
        spec,
        this.ctx.cache.getTestSpecificationResult(spec)?.duration ?? (CONFORMANCE.test(spec.moduleId) ? Number.POSITIVE_INFINITY : 0),
      ]),
    );
    const seconds = (spec: TestSpecification) => expected.get(spec) ?? 0;
    // Array.prototype.sort is stable: files expected to take as long keep Vitest's order.
    return ordered.sort((a, b) => Number(seconds(b) > seconds(a)) - Number(seconds(b) < seconds(a)));
  }
}
