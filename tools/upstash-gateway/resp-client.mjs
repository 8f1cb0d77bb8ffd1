// Minimal RESP2 client: just enough of the Redis protocol for the local Upstash gateway.
// One TCP connection, pipelined: commands are written back to back and Redis answers
// them in order, so a FIFO of pending callbacks is enough to match replies to requests.
import net from "node:net";

/** An error *reply* from Redis (`-ERR ...`). It is data, not a failure of the connection. */
export class RedisReplyError extends Error {
  name = "RedisReplyError";
}

/** The connection failed or closed before the reply arrived (the gateway maps this to 503). */
export class RedisConnectionError extends Error {
  name = "RedisConnectionError";
}

/**
 * Simple strings arrive as `string`, bulk strings as `Buffer` (binary-safe), integers as
 * `number` (int64 beyond 2^53 loses precision; fine for a test gateway), nil as `null`.
 * @typedef {string | number | Buffer | null | RedisReplyError | ReplyArray} Reply
 * @typedef {Array<Reply>} ReplyArray
 * @typedef {Array<string | Buffer>} Command
 * @typedef {{ onReply: (reply: Reply) => void, onError: (err: Error) => void }} Pending
 */

const CRLF = Buffer.from("\r\n");

/**
 * @param {{ host?: string, port: number, onConnect?: Command[] }} options
 *   onConnect: commands sent first on every (re)connection, say to set up and
 *   authenticate as a user; an error reply to one fails the connection.
 */
export function createRespClient({ host = "127.0.0.1", port, onConnect = [] }) {
  /** @type {net.Socket | null} */
  let socket = null;
  /** @type {Pending[]} */
  let pending = [];
  let closed = false;

  /** Fail everything in flight on `s` and forget it, so the next command reconnects. */
  function drop(/** @type {net.Socket} */ s, /** @type {string} */ reason) {
    if (socket !== s) return; // 'error' and 'close' both fire; act once
    socket = null;
    s.destroy();
    const failed = pending;
    pending = [];
    const err = new RedisConnectionError(`redis ${host}:${port}: ${reason}`);
    for (const p of failed) p.onError(err);
  }

  function connect() {
    const s = net.createConnection({ host, port });
    s.setNoDelay(true);
    const parser = createReplyParser();
    s.on("data", (chunk) => {
      if (socket !== s) return;
      let replies;
      try {
        replies = parser.push(chunk);
      } catch (err) {
        return drop(s, `protocol error: ${/** @type {Error} */ (err).message}`);
      }
      for (const reply of replies) pending.shift()?.onReply(reply);
    });
    // No timeouts on purpose: a hung Redis must hang the request (the "slow store" the
    // service has to time out on), while refused/closed connections fail right away.
    s.on("error", (err) => drop(s, err.message));
    s.on("close", () => drop(s, "connection closed"));
    for (const command of onConnect) {
      pending.push({
        onReply: (reply) => {
          if (reply instanceof RedisReplyError) drop(s, `${command[0]} on connecting failed: ${reply.message}`);
        },
        onError: () => {},
      });
    }
    if (onConnect.length > 0) s.write(encodeCommands(onConnect));
    return s;
  }

  /**
   * Send commands in a single socket write (so nothing else interleaves, which MULTI/EXEC
   * relies on) and resolve with one reply per command. Error replies are returned as
   * RedisReplyError values; the promise rejects only with RedisConnectionError.
   * @param {Command[]} commands
   * @returns {Promise<Reply[]>}
   */
  function exec(commands) {
    if (closed) return Promise.reject(new RedisConnectionError("client closed"));
    if (commands.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      socket ??= connect();
      /** @type {Reply[]} */
      const replies = new Array(commands.length);
      let left = commands.length;
      for (let i = 0; i < commands.length; i++) {
        pending.push({
          onReply: (reply) => {
            replies[i] = reply;
            if (--left === 0) resolve(replies);
          },
          onError: reject, // later calls are no-ops once the promise settled
        });
      }
      socket.write(encodeCommands(commands));
    });
  }

  function close() {
    closed = true;
    if (socket) drop(socket, "client closed");
  }

  return { exec, close };
}

/**
 * The commands as one RESP buffer. String arguments are written into one
 * text and encoded once (a Buffer per argument was most of the gateway's
 * work per command); Buffer arguments are copied as they are.
 * @param {Command[]} commands
 */
function encodeCommands(commands) {
  /** @type {Buffer[]} */
  const parts = [];
  let text = "";
  for (const args of commands) {
    text += `*${args.length}\r\n`;
    for (const arg of args) {
      if (typeof arg === "string") {
        text += `$${Buffer.byteLength(arg, "utf8")}\r\n${arg}\r\n`;
      } else {
        parts.push(Buffer.from(`${text}$${arg.length}\r\n`, "utf8"), arg, CRLF);
        text = "";
      }
    }
  }
  if (parts.length === 0) return Buffer.from(text, "utf8");
  parts.push(Buffer.from(text, "utf8"));
  return Buffer.concat(parts);
}

/** Accumulates socket chunks and yields every complete reply; keeps the partial tail. */
function createReplyParser() {
  /** @type {Buffer} */
  let buf = Buffer.alloc(0);
  return {
    /** @param {Buffer} chunk */
    push(chunk) {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      /** @type {Reply[]} */
      const out = [];
      let pos = 0;
      for (let r = parseReply(buf, pos); r; r = parseReply(buf, pos)) {
        out.push(r.value);
        pos = r.end;
      }
      buf = buf.subarray(pos);
      return out;
    },
  };
}

/**
 * Parse one reply starting at `pos`; null when the buffer does not hold all of it yet.
 * @param {Buffer} buf
 * @param {number} pos
 * @returns {{ value: Reply, end: number } | null}
 */
function parseReply(buf, pos) {
  const lineEnd = buf.indexOf(CRLF, pos);
  if (lineEnd === -1) return null;
  const line = buf.toString("utf8", pos + 1, lineEnd);
  const next = lineEnd + 2;
  switch (String.fromCharCode(buf[pos])) {
    case "+":
      return { value: line, end: next };
    case "-":
      return { value: new RedisReplyError(line), end: next };
    case ":":
      return { value: Number(line), end: next };
    case "$": {
      const len = Number(line);
      if (len < 0) return { value: null, end: next };
      if (buf.length < next + len + 2) return null;
      return { value: buf.subarray(next, next + len), end: next + len + 2 };
    }
    case "*": {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      /** @type {Reply[]} */
      const items = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buf, at);
        if (!item) return null;
        items.push(item.value);
        at = item.end;
      }
      return { value: items, end: at };
    }
    default:
      throw new Error(`unexpected RESP type byte 0x${buf[pos].toString(16)}`);
  }
}
