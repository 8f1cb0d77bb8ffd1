import type { Context } from "hono";
import type { z } from "zod";
import { InvalidInputError, TooLargeError } from "../errors.js";
import { BODY_MAX_BYTES } from "../limits.js";
import { fieldErrorCodes } from "./schemas.js";

/**
 * Reads and validates a JSON body: over 64 KiB is a 413, broken JSON or a
 * schema violation a 400 naming the first problem. Nothing is changed before
 * this has passed.
 */
export async function readBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > BODY_MAX_BYTES) throw new TooLargeError();
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (bytes.byteLength > BODY_MAX_BYTES) throw new TooLargeError();
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new InvalidInputError("invalid_body", "the body is not valid JSON");
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue.code === "unrecognized_keys") {
    throw new InvalidInputError("invalid_body", `unknown field ${issue.keys.map((k) => `"${k}"`).join(", ")}`);
  }
  const field = issue.path.length ? String(issue.path[0]) : "";
  const code = fieldErrorCodes[field] ?? "invalid_body";
  throw new InvalidInputError(code, field ? `${field}: ${issue.message}` : `body: ${issue.message}`);
}
