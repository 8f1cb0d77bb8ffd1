import path from "node:path";
import { describe, expect, it } from "vitest";
import { check, kindNameLiterals, kindNamesIn } from "../../tools/check-kind-names.mjs";

const root = path.resolve(import.meta.dirname, "../..");

describe("the core names no kind (tools/check-kind-names.mjs)", () => {
  it("finds the kinds by their folders", () => {
    expect(kindNamesIn(root).sort()).toEqual(["election", "flow", "idempotency", "mutex", "rwlock", "semaphore"]);
  });

  it("reports a kind's name as a string literal in code, not in a comment", () => {
    const text = [
      '// the mutex\'s note: "mutex" in a comment is fine',
      "/* so is 'rwlock' in a block comment */",
      'const a = kind === "mutex" ? 1 : 2;',
      "const b = `semaphore`;",
      'const c = "mutexes";',
    ].join("\n");
    expect(kindNameLiterals([["src/lockObject/x.ts", text]], ["mutex", "rwlock", "semaphore"])).toEqual([
      'src/lockObject/x.ts:3: "mutex"',
      "src/lockObject/x.ts:4: `semaphore`",
    ]);
  });

  it("finds none in the tree", () => {
    expect(check(root)).toEqual([]);
  });
});
