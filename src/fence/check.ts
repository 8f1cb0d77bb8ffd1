import { FenceInputError } from "./errors.js";

/** The longest resource name, in UTF-8 bytes: room for a key or a row id with a prefix, small enough to log. */
export const MAX_RESOURCE_BYTES = 200;

/** Fences are below 2^53: every store here holds them exactly (a JavaScript number, a Lua double, a SQL bigint). */
const FENCE_LIMIT = 2 ** 53;

/** A decimal fence as text: digits only, no sign, no leading zeros (so one fence has one spelling). */
const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/**
 * A fence as the caller gave it, checked: a safe non-negative integer below
 * 2^53, as a number or as its decimal text (what `HOLDFAST_FENCE` and a SQL
 * bigint column arrive as). Anything else (a fraction, a negative, NaN, a
 * bigint, " 7", "7.0", "1e3", 2^53 or past it) is refused with invalid_fence.
 */
export function checkFence(value: unknown, field = "fence"): number {
  const n = fenceOf(value);
  if (n === undefined) {
    throw new FenceInputError(
      "invalid_fence",
      field,
      `${field} must be a non-negative integer below 2^53 (a number or its decimal text), got ${describe(value)}`,
    );
  }
  return n;
}

/**
 * A fence read back from a resource, checked the same way; one that is not a
 * fence is corrupt_fence, and the helper refuses the resource rather than
 * overwrite what someone else wrote there.
 */
export function checkStoredFence(value: unknown, resource: string): number {
  const n = fenceOf(value);
  if (n === undefined) {
    throw new FenceInputError(
      "corrupt_fence",
      "resource",
      `the fence stored for resource ${JSON.stringify(resource)} is not a fence (${describe(value)}): refused, not overwritten`,
    );
  }
  return n;
}

/**
 * A resource name: any characters (it names the caller's key, row or object),
 * not empty, at most 200 UTF-8 bytes. A lone surrogate counts as the 3 bytes
 * of the U+FFFD it would be sent as.
 */
export function checkResource(name: unknown, field = "resource"): string {
  if (typeof name !== "string" || name.length === 0) {
    throw new FenceInputError("invalid_resource", field, `${field} must be a non-empty string, got ${describe(name)}`);
  }
  const bytes = utf8Length(name);
  if (bytes > MAX_RESOURCE_BYTES) {
    throw new FenceInputError("invalid_resource", field, `${field} is ${bytes} UTF-8 bytes, over the ${MAX_RESOURCE_BYTES}-byte limit`);
  }
  return name;
}

function fenceOf(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) && value >= 0 && value < FENCE_LIMIT ? value : undefined;
  if (typeof value === "string" && DECIMAL.test(value)) {
    const n = Number(value);
    return n < FENCE_LIMIT ? n : undefined;
  }
  return undefined;
}

/** UTF-8 length without TextEncoder's copy (the name may be long before it is refused). */
function utf8Length(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** A short, safe picture of a bad argument for an error message. */
export function describe(value: unknown): string {
  if (typeof value === "string") return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}...` : JSON.stringify(value);
  if (typeof value === "bigint") return `${value}n`;
  if (value === null || typeof value !== "object") return String(value);
  return Array.isArray(value) ? "an array" : "an object";
}
