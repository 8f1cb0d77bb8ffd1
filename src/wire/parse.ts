/**
 * JSON text to checked values, alike for an HTTP body (http/readBody.ts), a
 * wait socket's message and the library's arguments: too deep, not JSON or
 * a schema violation is an InvalidInputError naming the first problem.
 */
import english from "zod/v4/locales/en.js";
import type * as z from "zod/mini";
import { InvalidInputError, TooLargeError } from "../errors.js";
import { JSON_MAX_DEPTH, jsonDepth } from "../jsonDepth.js";
import { BODY_MAX_BYTES } from "../limits.js";
import { fieldErrorCodes } from "./schemas.js";
import { acquireMessage } from "./socketMessages.js";

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
function jsonOf(text: string, what = "body"): unknown {
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

/** A socket's message as JSON, and its type: text only, no larger than a request body (wait and watch sockets alike). */
export function socketMessageOf(data: string | ArrayBuffer, socket: "wait" | "watch"): { json: unknown; type: unknown } {
  if (typeof data !== "string") throw new InvalidInputError("invalid_body", `${socket} socket messages are JSON text, not binary`);
  if (data.length > BODY_MAX_BYTES) throw new TooLargeError();
  const json = jsonOf(data, "message");
  return { json, type: typeof json === "object" && json !== null && !Array.isArray(json) ? (json as { type?: unknown }).type : undefined };
}

/** A wait socket's acquire, checked: `keep` (the socket stays for the holder's messages) and the kind's body. */
export interface CheckedAcquire<Body> {
  keep: boolean;
  body: Body;
}

/**
 * A wait socket's message (socketMessageOf), in one call: when the socket expects its acquire
 * (`acquireBody`, the kind's HTTP acquire body's schema, is given) and the message is one, the
 * acquire message is checked and, less its type and keep, the kind's body with that schema (a 400
 * as over HTTP). Any other message comes back as read, for its socket to judge by its phase.
 */
export function waitSocketMessageOf<Body>(
  data: string | ArrayBuffer,
  acquireBody?: z.ZodMiniType<Body>,
): { json: unknown; type: unknown; acquire?: CheckedAcquire<Body> } {
  const { json, type } = socketMessageOf(data, "wait");
  if (type !== "acquire" || !acquireBody) return { json, type };
  const { type: _type, keep, ...message } = validated(json, acquireMessage, "acquire message");
  return { json, type, acquire: { keep: keep === true, body: validated(message, acquireBody, "acquire message") } };
}
