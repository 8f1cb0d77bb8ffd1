import type { Context } from "hono";
import english from "zod/v4/locales/en.js";
import type * as z from "zod/mini";
import { InvalidInputError, TooLargeError } from "../errors.js";
import { BODY_MAX_BYTES } from "../limits.js";
import { JSON_MAX_DEPTH, jsonDepth } from "../jsonDepth.js";
import { fieldErrorCodes } from "./schemas.js";

/**
 * Reads and validates a JSON body: over 64 KiB is a 413, broken JSON, JSON
 * nested deeper than JSON_MAX_DEPTH or a schema violation a 400 naming the
 * first problem. Nothing is changed before this has passed.
 */
/** zod/mini loads no messages of its own: ours are English ("Too small: expected number to be >=1000"). */
const englishMessages = english().localeError;

export async function readBody<S extends z.ZodMiniType>(c: Context, schema: S): Promise<z.output<S>> {
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > BODY_MAX_BYTES) throw new TooLargeError();
  const bytes = await readAtMost(c.req.raw.body, BODY_MAX_BYTES);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new InvalidInputError("invalid_body", "the body is not valid UTF-8");
  }
  return parseJsonBody(text, schema);
}

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
async function readAtMost(body: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      throw new TooLargeError();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
