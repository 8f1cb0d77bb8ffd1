import { InvalidInputError } from "./errors.js";
import {
  HOLDER_MAX_CHARS,
  NAME_MAX_CHARS,
  NAME_PATTERN,
  NAMESPACE_PATTERN,
  TOKEN_MAX_BYTES,
  TTL_MAX_MS,
  TTL_MIN_MS,
  LIBRARY_WAIT_MAX_MS,
} from "./limits.js";

/**
 * The library's checks, with the HTTP contract's bounds and error codes: bad
 * input is an InvalidInputError naming the field, thrown before anything
 * reaches the store.
 */
export function checkInt(code: string, field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidInputError(code, `${field} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

export const checkTtl = (value: unknown, field = "ttlMs") => checkInt("invalid_ttl", field, value, TTL_MIN_MS, TTL_MAX_MS);
export const checkWait = (value: unknown) => checkInt("invalid_wait", "waitMs", value, 0, LIBRARY_WAIT_MAX_MS);

/**
 * Why `value` is not a lock name or idempotency key, or undefined when it is one: the HTTP API's, the
 * library's and the client's one answer (400 invalid_name). A name too long says its length; "." and
 * ".." say why (a URL's path drops them, so they would reach another route).
 */
export function nameProblem(value: unknown, what = "names"): string | undefined {
  if (typeof value === "string" && NAME_PATTERN.test(value)) return undefined;
  if (typeof value === "string" && value.length > NAME_MAX_CHARS) {
    return `${what} are at most ${NAME_MAX_CHARS} characters; this one is too long (${value.length})`;
  }
  if (value === "." || value === "..") return `${what} may not be "." or ".." (a URL's path drops them)`;
  return `${what} match ^[A-Za-z0-9._:@+=-]{1,200}$`;
}

export function checkName(value: unknown, what = "names"): string {
  const problem = nameProblem(value, what);
  if (problem) throw new InvalidInputError("invalid_name", `${problem}, got ${JSON.stringify(value)?.slice(0, 80)}`);
  return value as string;
}

/** Namespaces are part of storage keys: no ":" or braces, so no two (namespace, name) pairs share a key. */
export function checkNamespace(value: unknown): string {
  if (typeof value !== "string" || !NAMESPACE_PATTERN.test(value)) {
    throw new InvalidInputError("invalid_namespace", `namespaces match ^[A-Za-z0-9_-]{1,64}$, got ${JSON.stringify(value)?.slice(0, 80)}`);
  }
  return value;
}

const utf8 = new TextEncoder();

/** 1 .. TOKEN_MAX_BYTES bytes of UTF-8: the bound the store's scripts check, so a long multi-byte token is a 400, never a 500. */
export function isTokenSized(value: string): boolean {
  if (value.length < 1 || value.length > TOKEN_MAX_BYTES) return false;
  // A UTF-16 code unit is at most 3 bytes of UTF-8: short tokens (every token we issue) need no encoding.
  return value.length * 3 <= TOKEN_MAX_BYTES || utf8.encode(value).length <= TOKEN_MAX_BYTES;
}

/** A holder label prints as one line: no control (Cc), format (Cf: bidi overrides, zero-width), lone surrogate (Cs) or line/paragraph separators. */
export function isPrintableLabel(value: string): boolean {
  return !/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u.test(value);
}

export const TOKEN_SIZE_MESSAGE = `token must be a string of 1 to ${TOKEN_MAX_BYTES} bytes (UTF-8)`;

/** A holder label for the library: the HTTP contract's rule (1-256 printable characters). */
export function checkHolder(value: unknown): string {
  if (typeof value !== "string" || value.length < 1 || value.length > HOLDER_MAX_CHARS || !isPrintableLabel(value)) {
    throw new InvalidInputError("invalid_holder", `holder must be 1 to ${HOLDER_MAX_CHARS} printable characters (no control or format characters)`);
  }
  return value;
}

export function checkToken(value: unknown): string {
  if (typeof value !== "string" || !isTokenSized(value)) throw new InvalidInputError("invalid_token", TOKEN_SIZE_MESSAGE);
  return value;
}

/**
 * A position in a history of changes as a query sends it (`since`: an election's changes and its
 * watch socket): a whole number from 0, else 400 invalid_position naming what was sent.
 */
export function positionOf(since: string): number {
  const n = /^\d{1,16}$/.test(since) ? Number(since) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidInputError("invalid_position", `since must be a whole number from 0, got ${JSON.stringify(since)}`);
  return n;
}
