import type { Context } from "hono";
import type * as z from "zod/mini";
import { InvalidInputError, TooLargeError } from "../errors.js";
import { BODY_MAX_BYTES } from "../limits.js";
import { parseJsonBody } from "../wire/parse.js";

/**
 * Reads and validates a JSON body: over 64 KiB is a 413, broken JSON, JSON
 * nested deeper than JSON_MAX_DEPTH or a schema violation a 400 naming the
 * first problem. Nothing is changed before this has passed.
 */
export async function readBody<S extends z.ZodMiniType>(c: Context, schema: S): Promise<z.output<S>> {
  const length = c.req.header("content-length");
  const declared = Number(length ?? "0");
  if (declared > BODY_MAX_BYTES) throw new TooLargeError();
  // A declared length within the limit is the body's length (the runtime ends the body there), so it
  // is read whole in one step; a body without one (chunked) is read chunk by chunk and cut at the limit.
  const bytes =
    length !== undefined && Number.isSafeInteger(declared) ? await c.req.raw.arrayBuffer() : await readAtMost(c.req.raw.body, BODY_MAX_BYTES);
  if (bytes.byteLength > BODY_MAX_BYTES) throw new TooLargeError();
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new InvalidInputError("invalid_body", "the body is not valid UTF-8");
  }
  return parseJsonBody(text, schema);
}

/** One decoder for every body: a whole-input decode keeps no state between calls, and fatal refuses broken UTF-8. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

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
