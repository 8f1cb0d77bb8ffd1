// Translation between Upstash REST JSON and Redis: request bodies -> commands, replies -> JSON.
import { RedisReplyError } from "./resp-client.mjs";

/** @typedef {import("./resp-client.mjs").Reply} Reply */

/** A request body the gateway refuses (answered with 400). */
export class BadRequest extends Error {}

// Every request shares one pipelined Redis connection, so commands that change the
// connection's state (transactions, pub/sub, db selection, ...) or block it would leak
// into other requests. Upstash runs MULTI/EXEC itself via /multi-exec, as we do.
const CONNECTION_STATE = new Set([
  "MULTI",
  "EXEC",
  "DISCARD",
  "WATCH",
  "UNWATCH",
  "SELECT",
  "SWAPDB",
  "AUTH",
  "HELLO",
  "RESET",
  "QUIT",
  "MONITOR",
  "SUBSCRIBE",
  "PSUBSCRIBE",
  "SSUBSCRIBE",
  "UNSUBSCRIBE",
  "PUNSUBSCRIBE",
  "SUNSUBSCRIBE",
]);
const BLOCKING = new Set(["BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BLMPOP", "BZPOPMIN", "BZPOPMAX", "BZMPOP", "WAIT", "WAITAOF"]);

/**
 * Validate one command: a non-empty array of strings; numbers and booleans are
 * stringified because the Upstash client sends e.g. EX seconds as JSON numbers.
 * @param {unknown} value
 * @returns {string[]}
 */
export function toCommand(value) {
  if (!Array.isArray(value) || value.length === 0) {
    throw new BadRequest('ERR a command must be a non-empty JSON array, e.g. ["GET","key"]');
  }
  const args = value.map((arg) => {
    if (typeof arg === "string") return arg;
    if (typeof arg === "number" || typeof arg === "boolean") return String(arg);
    throw new BadRequest(`ERR command arguments must be strings, numbers or booleans, got ${JSON.stringify(arg)}`);
  });
  const name = args[0].toUpperCase();
  const sub = (args[1] ?? "").toUpperCase();
  if (
    CONNECTION_STATE.has(name) ||
    BLOCKING.has(name) ||
    (name === "CLIENT" && sub === "REPLY") ||
    ((name === "XREAD" || name === "XREADGROUP") && args.some((a) => a.toUpperCase() === "BLOCK"))
  ) {
    throw new BadRequest(`ERR command '${args[0]}' is not supported by the local Upstash gateway (it would affect the shared connection)`);
  }
  return args;
}

/**
 * Validate a /pipeline or /multi-exec body: a non-empty array of commands.
 * @param {unknown} value
 * @returns {string[][]}
 */
export function toCommands(value) {
  if (!Array.isArray(value) || value.length === 0) {
    throw new BadRequest('ERR body must be a non-empty JSON array of commands, e.g. [["SET","k","v"],["GET","k"]]');
  }
  return value.map(toCommand);
}

/**
 * Reply -> JSON value. With Upstash-Encoding: base64 every string (bulk or status, at any
 * depth) is sent as base64 of its bytes, so binary values survive JSON; numbers and nil stay.
 * @param {Reply} reply
 * @param {boolean} base64
 * @returns {unknown}
 */
export function replyToJson(reply, base64) {
  if (reply === null || typeof reply === "number") return reply;
  if (Array.isArray(reply)) return reply.map((item) => replyToJson(item, base64));
  // Nested error (e.g. inside a Lua table): keep its text readable, like top-level errors.
  if (reply instanceof RedisReplyError) return reply.message;
  const bytes = typeof reply === "string" ? Buffer.from(reply, "utf8") : reply;
  return bytes.toString(base64 ? "base64" : "utf8");
}

/**
 * One `{result}` / `{error}` entry, the shape of every element of a pipeline response.
 * @param {Reply} reply
 * @param {boolean} base64
 */
export function toEntry(reply, base64) {
  return reply instanceof RedisReplyError ? { error: reply.message } : { result: replyToJson(reply, base64) };
}
