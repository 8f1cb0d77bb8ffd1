// Lua scripts as Upstash runs them, on a redis-server 7.0 that does not know
// Upstash's `allow-key-locking` shebang flag.
//
// Upstash locks only a flagged script's KEYS (an unflagged one takes the
// database-wide lock) and refuses, while it runs, any key outside them:
//   ERR Dynamic keys are not allowed in Lua scripts when 'allow-key-locking'
//   flag is set. Key was: <key>
// Stock Redis 7.0 refuses the flag itself ("ERR Unexpected flag in script
// shebang: allow-key-locking"). So, in "upstash" mode, the gateway runs a
// flagged script with the flag taken out of its first line, and answers to
// the digest of the text the client sent (EVALSHA, SCRIPT LOAD/EXISTS), as
// Upstash does. The key rule is enforced by Redis itself (keyRule.mjs), not
// by reading the script. In "verbatim" mode scripts pass through unchanged,
// as a plain REST proxy in front of stock Redis does.
import { createHash } from "node:crypto";
import { RedisReplyError } from "./resp-client.mjs";

export const KEY_LOCKING_FLAG = "allow-key-locking";

/**
 * @typedef {object} ScriptCall
 * @property {string[]} command   what to send to Redis
 * @property {string[] | null} keys  the KEYS of a flagged script (the only keys it may touch), else null
 * @property {string} [sent]  a flagged script's digest as the client knows it
 * @property {(reply: import("./resp-client.mjs").Reply) => import("./resp-client.mjs").Reply} [answer]  turns Redis's reply into Upstash's
 */

/**
 * @param {{ mode: "upstash" | "verbatim" }} options
 */
export function createScriptTranslator({ mode }) {
  /** Digest of a flagged text as sent -> the text Redis runs and its digest. @type {Map<string, { text: string, sha: string }>} */
  const flagged = new Map();

  /** @param {string} text */
  function learn(text) {
    const run = withoutKeyLockingFlag(text);
    if (run === null) return null;
    const sent = sha1(text);
    const entry = { text: run, sha: sha1(run) };
    flagged.set(sent, entry);
    return { sent, ...entry };
  }

  /**
   * The command to send for one client command, and how to check and answer it.
   * @param {string[]} args
   * @returns {ScriptCall}
   */
  function translate(args) {
    if (mode === "verbatim") return { command: args, keys: null };
    const name = args[0].toUpperCase();
    if (name === "EVAL" || name === "EVAL_RO") {
      const script = learn(args[1] ?? "");
      if (!script) return { command: args, keys: null };
      return { command: [args[0], script.text, ...args.slice(2)], keys: keysOf(args), sent: script.sent };
    }
    if (name === "EVALSHA" || name === "EVALSHA_RO") {
      const sent = String(args[1]).toLowerCase();
      const script = flagged.get(sent);
      if (!script) return { command: args, keys: null };
      return { command: [args[0], script.sha, ...args.slice(2)], keys: keysOf(args), sent };
    }
    if (name === "SCRIPT") {
      const sub = (args[1] ?? "").toUpperCase();
      if (sub === "LOAD" && args.length === 3) {
        const script = learn(args[2]);
        if (script)
          return {
            command: [args[0], args[1], script.text],
            keys: null,
            answer: (reply) => (reply instanceof RedisReplyError ? reply : script.sent),
          };
      }
      if (sub === "EXISTS") {
        return { command: [args[0], args[1], ...args.slice(2).map((sha) => flagged.get(sha.toLowerCase())?.sha ?? sha)], keys: null };
      }
      if (sub === "FLUSH") flagged.clear();
    }
    return { command: args, keys: null };
  }

  return { translate };
}

/**
 * The script as redis-server 7.0 runs it: `allow-key-locking` taken out of a
 * first line `#!lua flags=...` (the line stays, so no-writes still holds and
 * line numbers do not move); null when the script does not carry the flag
 * (Upstash ignores it anywhere but the first line).
 * @param {string} text
 * @returns {string | null}
 */
export function withoutKeyLockingFlag(text) {
  const lineEnd = text.indexOf("\n");
  const first = lineEnd === -1 ? text : text.slice(0, lineEnd);
  const m = /^#!lua\s+flags=(\S*)\s*$/.exec(first);
  if (!m) return null;
  const flags = m[1].split(",").filter((f) => f !== "");
  if (!flags.includes(KEY_LOCKING_FLAG)) return null;
  const kept = flags.filter((f) => f !== KEY_LOCKING_FLAG);
  return `${kept.length > 0 ? `#!lua flags=${kept.join(",")}` : "#!lua"}${lineEnd === -1 ? "" : text.slice(lineEnd)}`;
}

/** EVAL/EVALSHA's KEYS; an unusable numkeys is Redis's to refuse, so it yields none here. @param {string[]} args */
function keysOf(args) {
  const n = Number(args[2]);
  if (!Number.isInteger(n) || n < 0 || n > args.length - 3) return [];
  return args.slice(3, 3 + n);
}

/** @param {string} text */
function sha1(text) {
  return createHash("sha1").update(text, "utf8").digest("hex");
}
