// Upstash's key rule for `allow-key-locking` scripts, enforced by Redis itself.
//
// A flagged script may touch only the keys in its KEYS (Upstash locks exactly
// those). Rather than read the script to guess what it touches, the gateway
// runs every flagged script on a connection of its own, logged in as an ACL
// user whose key patterns are set, just before the call and on the same
// connection, to that call's KEYS and nothing else. Redis checks every
// redis.call inside the script against them; a key outside fails the call,
// and the gateway answers it with Upstash's error text, naming the key from
// Redis's ACL log. The user may not run the commands that need the whole
// database, which Upstash refuses in a flagged script too.
//
// It costs one ACL SETUSER per flagged call: a test instrument, so the bench
// can turn it off (keyRule "off") and measure scripts as Upstash runs them.
import { createRespClient, RedisReplyError } from "./resp-client.mjs";

const USER = "holdfast-gateway-scripts";
const WHOLE_DATABASE = ["-flushdb", "-flushall", "-keys", "-scan", "-randomkey", "-dbsize", "-swapdb", "-select", "-move"];

/** @typedef {import("./resp-client.mjs").Reply} Reply */

/**
 * @param {{ host: string, port: number }} redis
 */
export function createKeyRule({ host, port }) {
  const connection = createRespClient({
    host,
    port,
    // Again on every connection: a restarted redis-server has forgotten the user.
    onConnect: [
      ["ACL", "SETUSER", USER, "reset", "on", "nopass", "+@all", ...WHOLE_DATABASE, "allkeys", "allchannels"],
      ["AUTH", USER, "unused"],
    ],
  });

  /**
   * Runs commands in order on the checked connection, each under the keys it
   * may touch: a flagged script's KEYS, or every key for anything else.
   * @param {Array<{ command: string[], keys: string[] | null }>} calls
   * @returns {Promise<Reply[]>} one reply per call
   */
  async function run(calls) {
    /** @type {string[][]} */
    const commands = [];
    /** @type {number[]} */
    const at = [];
    for (const call of calls) {
      commands.push(["ACL", "SETUSER", USER, "resetkeys", ...(call.keys ? call.keys.map(exactKeyPattern) : ["allkeys"])]);
      at.push(commands.length);
      commands.push(call.command);
    }
    const replies = await connection.exec(commands);
    return await Promise.all(at.map((i) => (replies[i - 1] instanceof RedisReplyError ? notChecked(replies[i - 1]) : asUpstash(replies[i]))));
  }

  /**
   * A transaction: ACL patterns cannot change inside MULTI (Redis checks keys
   * as commands are queued), so when every command is a flagged script they
   * may touch the union of their KEYS (Upstash locks that union at EXEC);
   * with any other command in it, nothing is checked.
   * @param {Array<{ command: string[], keys: string[] | null }>} calls
   * @returns {Promise<Reply[]>} MULTI's, each command's and EXEC's reply
   */
  async function runTransaction(calls) {
    const keys = calls.every((c) => c.keys) ? [...new Set(calls.flatMap((c) => c.keys ?? []))].map(exactKeyPattern) : ["allkeys"];
    const [setup, ...replies] = await connection.exec([
      ["ACL", "SETUSER", USER, "resetkeys", ...keys],
      ["MULTI"],
      ...calls.map((c) => c.command),
      ["EXEC"],
    ]);
    if (setup instanceof RedisReplyError) return [notChecked(setup)];
    const exec = replies[replies.length - 1];
    if (Array.isArray(exec)) replies[replies.length - 1] = await Promise.all(exec.map(asUpstash));
    return replies;
  }

  /** Redis's refusal of a key as Upstash words it. @param {Reply} reply */
  async function asUpstash(reply) {
    if (!(reply instanceof RedisReplyError) || !/can't access at least one of the keys/.test(reply.message)) return reply;
    return new RedisReplyError(
      `ERR Dynamic keys are not allowed in Lua scripts when 'allow-key-locking' flag is set. Key was: ${await lastRefusedKey()}`,
    );
  }

  /** @param {RedisReplyError} setup */
  function notChecked(setup) {
    return new RedisReplyError(`ERR the gateway could not set up the key rule: ${setup.message}`);
  }

  /** The key of the latest refusal in Redis's ACL log. */
  async function lastRefusedKey() {
    const [log] = await connection.exec([["ACL", "LOG", "1"]]);
    const entry = Array.isArray(log) ? log[0] : null;
    if (!Array.isArray(entry)) return "(unknown)";
    for (let i = 0; i + 1 < entry.length; i += 2) {
      if (String(entry[i]) === "object") return String(entry[i + 1]);
    }
    return "(unknown)";
  }

  return { run, runTransaction, close: () => connection.close() };
}

/** An ACL key pattern that matches exactly this key (glob characters escaped). @param {string} key */
function exactKeyPattern(key) {
  return `%RW~${key.replace(/[\\*?[\]]/g, "\\$&")}`;
}
