/**
 * JSON text to checked values, alike for an HTTP body (http/readBody.ts), a
 * wait socket's message and the library's arguments: too deep, not JSON or
 * a schema violation is an InvalidInputError naming the first problem.
 */
import english from "zod/v4/locales/en.js";
import type * as z from "zod/mini";
import { InvalidInputError } from "../errors.js";
import { JSON_MAX_DEPTH, jsonDepth } from "../jsonDepth.js";
import { fieldErrorCodes } from "./schemas.js";

/** zod/mini loads no messages of its own: ours are English ("Too small: expected number to be >=1000"). */
const englishMessages = english().localeError;

/**
 * Validates a JSON text against a schema, as readBody does for a body (and a
 * wait socket for its messages): too deep, not JSON or a schema violation is
 * an InvalidInputError naming the first problem.
 */
export function parseJsonBody<S extends z.ZodMiniType>(text: string, schema: S, what = "body"): z.output<S> {
  return validated(jsonOf(text, what), schema, what);
}

/** The JSON value of a text: too deep or not JSON is an InvalidInputError. */
export function jsonOf(text: string, what = "body"): unknown {
  if (jsonDepth(text) > JSON_MAX_DEPTH) {
    throw new InvalidInputError("invalid_body", `the ${what} nests arrays and objects deeper than ${JSON_MAX_DEPTH} levels`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidInputError("invalid_body", `the ${what} is not valid JSON`);
  }
}

/** A JSON value checked against a schema: a violation is an InvalidInputError naming the field and the problem. */
export function validated<S extends z.ZodMiniType>(json: unknown, schema: S, what = "body"): z.output<S> {
  const parsed = schema.safeParse(json, { error: englishMessages });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue.code === "unrecognized_keys") {
    throw new InvalidInputError("invalid_body", `unknown field ${issue.keys.map((k) => `"${k}"`).join(", ")}`);
  }
  const field = issue.path.length ? String(issue.path[0]) : "";
  const code = fieldErrorCodes[field] ?? "invalid_body";
  throw new InvalidInputError(code, field ? `${field}: ${issue.message}` : `${what}: ${issue.message}`);
}

/**
 * The body's bytes, read as they arrive and abandoned past `max`, whatever
 * Content-Length said (a chunked body has none): a 100 MiB upload costs
 * 64 KiB of memory, not 100 MiB.
 */
