import { describe, expect, it } from "vitest";
import { checkFence, checkResource, checkStoredFence, FenceInputError, StaleFenceError } from "../../src/fence/index.js";

/** holdfast/fence's argument checks: what a fenced write refuses before it sends anything. */
describe("fence arguments", () => {
  it("takes a safe non-negative integer, as a number or its decimal text", () => {
    expect(checkFence(0)).toBe(0);
    expect(checkFence(42)).toBe(42);
    expect(checkFence("42")).toBe(42);
    expect(checkFence(2 ** 53 - 1)).toBe(2 ** 53 - 1);
    expect(checkFence(String(2 ** 53 - 1))).toBe(2 ** 53 - 1);
  });

  it.each([
    ["2^53", 2 ** 53],
    ["2^53 as text", String(2 ** 53)],
    ["past 2^53 as text", "99999999999999999"],
    ["negative", -1],
    ["fraction", 1.5],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["bigint", 7n],
    ["leading zero", "07"],
    ["spaces", " 7"],
    ["exponent", "1e3"],
    ["decimal point", "7.0"],
    ["empty text", ""],
    ["null", null],
  ])("refuses a fence: %s", (_, value) => {
    const err = catchError(() => checkFence(value));
    expect(err).toBeInstanceOf(FenceInputError);
    expect(err).toMatchObject({ code: "invalid_fence", field: "fence" });
  });

  it("calls a bad stored fence corrupt, naming the resource", () => {
    expect(checkStoredFence("12", "orders:42")).toBe(12);
    const err = catchError(() => checkStoredFence("12abc", "orders:42"));
    expect(err).toMatchObject({ code: "corrupt_fence", field: "resource" });
    expect((err as Error).message).toContain('"orders:42"');
  });

  it("takes any characters up to 200 UTF-8 bytes as a resource", () => {
    expect(checkResource("{orders}:42 é 🔒")).toBe("{orders}:42 é 🔒");
    expect(checkResource("x".repeat(200))).toHaveLength(200);
    // 50 four-byte characters are 200 bytes; one more two-byte one is past the limit.
    expect(checkResource("🔒".repeat(50))).toHaveLength(100);
    expect(catchError(() => checkResource(`${"🔒".repeat(50)}é`))).toMatchObject({ code: "invalid_resource" });
    expect(catchError(() => checkResource("x".repeat(201)))).toMatchObject({ code: "invalid_resource" });
    expect(catchError(() => checkResource(""))).toMatchObject({ code: "invalid_resource", field: "resource" });
    expect(catchError(() => checkResource(42))).toMatchObject({ code: "invalid_resource" });
  });

  it("names both fences and the resource when one is stale", () => {
    const err = new StaleFenceError("orders:42", 7, 9);
    expect(err).toMatchObject({ code: "stale_fence", resource: "orders:42", fence: 7, current: 9, name: "StaleFenceError" });
    expect(err.message).toMatch(/fence 7 .*"orders:42".*fence 9/);
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}
