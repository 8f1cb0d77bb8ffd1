// Local stand-in for the Upstash Redis REST API, in front of a real redis-server, so tests
// and `wrangler dev` exercise the real @upstash/redis client without a cloud account.
// Implements POST /, /pipeline and /multi-exec with Bearer auth and Upstash-Encoding: base64,
// Lua scripts as Upstash runs them (scripts.mjs: its allow-key-locking flag, with the key rule
// enforced by Redis, keyRule.mjs), and Upstash's answers to an oversize request and a spent quota.
import http from "node:http";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { createKeyRule } from "./keyRule.mjs";
import { createRespClient, RedisConnectionError, RedisReplyError } from "./resp-client.mjs";
import { createScriptTranslator } from "./scripts.mjs";
import { BadRequest, toCommand, toCommands, toEntry, replyToJson } from "./wire.mjs";

/** @typedef {import("./resp-client.mjs").Reply} Reply */
/** @typedef {{ runs: number, keyRuleRefusals: number, spanningSlots: number }} ScriptStats */
/** @typedef {{ url: string, port: number, close: () => Promise<void>, scriptStats: () => Map<string, ScriptStats> }} Gateway */

/** Upstash's request size limit on the free and pay-as-you-go plans (its docs: 10 MB). */
export const UPSTASH_MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/**
 * @param {{ redisHost?: string, redisPort: number, token: string, port?: number,
 *   scripts?: "upstash" | "verbatim", keyRule?: "enforce" | "off",
 *   maxRequestBytes?: number, requestLimit?: number }} options
 *   scripts: "upstash" runs allow-key-locking scripts as Upstash does (the default);
 *     "verbatim" passes scripts to Redis unchanged, like a plain REST proxy in front of stock Redis.
 *   keyRule: "enforce" (the default) makes Redis refuse a flagged script's keys outside KEYS;
 *     "off" skips the check and its cost (the bench).
 *   requestLimit: requests answered before every further one gets Upstash's quota error.
 * @returns {Promise<Gateway>}
 */
export async function startGateway({
  redisHost = "127.0.0.1",
  redisPort,
  token,
  port = 0,
  scripts = "upstash",
  keyRule = "enforce",
  maxRequestBytes = UPSTASH_MAX_REQUEST_BYTES,
  requestLimit = Number.POSITIVE_INFINITY,
}) {
  if (!token) throw new Error("startGateway: a token is required");
  const redis = createRespClient({ host: redisHost, port: redisPort });
  const translator = createScriptTranslator({ mode: scripts });
  const checked = scripts === "upstash" && keyRule === "enforce" ? createKeyRule({ host: redisHost, port: redisPort }) : null;
  /** Flagged scripts run, by the digest the client knows them by. @type {Map<string, ScriptStats>} */
  const stats = new Map();
  let requests = 0;

  /**
   * Runs a request's commands in order: flagged scripts under the key rule
   * (the whole request on the checked connection, so its order holds), the
   * rest as they are. One reply per command.
   * @param {string[][]} commands
   * @param {boolean} [transaction]  MULTI..EXEC around them, written in one go so no other request interleaves
   * @returns {Promise<Reply[]>}
   */
  async function run(commands, transaction = false) {
    const calls = commands.map(translator.translate);
    const underRule = checked !== null && calls.some((c) => c.keys);
    let replies;
    if (transaction) {
      const all = await (underRule ? checked.runTransaction(calls) : redis.exec([["MULTI"], ...calls.map((c) => c.command), ["EXEC"]]));
      replies = [all[all.length - 1]];
    } else {
      replies = underRule ? await checked.run(calls) : await redis.exec(calls.map((c) => c.command));
    }
    // Each command's reply in Upstash's form (a SCRIPT LOAD answers the digest the client sent), inside a
    // transaction too: there they are EXEC's entries (EXEC itself may be an error or null: left as it is).
    const mapped = (list) => list.map((reply, i) => calls[i].answer?.(reply) ?? reply);
    if (!transaction) {
      const answered = mapped(replies);
      for (const [i, call] of calls.entries()) count(call, answered[i]);
      return answered;
    }
    const entries = Array.isArray(replies[0]) ? mapped(replies[0]) : null;
    for (const [i, call] of calls.entries()) count(call, entries ? entries[i] : null);
    return [entries ?? replies[0]];
  }

  /** @param {import("./scripts.mjs").ScriptCall} call @param {Reply | null} reply */
  function count(call, reply) {
    if (!call.keys || !call.sent) return;
    const s = stats.get(call.sent) ?? { runs: 0, keyRuleRefusals: 0, spanningSlots: 0 };
    s.runs++;
    if (reply instanceof RedisReplyError && reply.message.startsWith("ERR Dynamic keys are not allowed")) s.keyRuleRefusals++;
    if (new Set(call.keys.map(hashTagOf)).size > 1) s.spanningSlots++;
    stats.set(call.sent, s);
  }

  /** @type {Record<string, (body: unknown, base64: boolean) => Promise<[number, unknown]>>} */
  const routes = {
    // Single command: errors are a 400 whose text is Redis's own message.
    "/": async (body, base64) => {
      const [reply] = await run([toCommand(body)]);
      return reply instanceof RedisReplyError ? [400, { error: reply.message }] : [200, { result: replyToJson(reply, base64) }];
    },
    // Pipeline: always 200, with a {result} or {error} per command.
    "/pipeline": async (body, base64) => {
      const replies = await run(toCommands(body));
      return [200, replies.map((reply) => toEntry(reply, base64))];
    },
    // Transaction: exec() writes MULTI..EXEC in one go, so no other request interleaves.
    "/multi-exec": async (body, base64) => {
      const [exec] = await run(toCommands(body), true);
      if (exec instanceof RedisReplyError) return [400, { error: exec.message }]; // EXECABORT
      if (!Array.isArray(exec)) return [400, { error: "EXECABORT Transaction aborted" }];
      return [200, exec.map((reply) => toEntry(reply, base64))];
    },
  };

  const server = http.createServer(async (req, res) => {
    try {
      const [status, body] = await handle(req);
      send(res, status, body);
    } catch (err) {
      send(res, 500, { error: `gateway bug: ${/** @type {Error} */ (err).message}` });
    }
  });

  /** @param {http.IncomingMessage} req @returns {Promise<[number, unknown]>} */
  async function handle(req) {
    if (req.headers.authorization !== `Bearer ${token}`) return [401, { error: "Unauthorized" }];
    const path = (req.url ?? "/").split("?")[0];
    const route = req.method === "POST" ? routes[path] : undefined;
    if (!route) return [404, { error: `Not found: ${req.method} ${path} (supported: POST /, /pipeline, /multi-exec)` }];
    const text = await readBody(req, maxRequestBytes);
    // Upstash's own texts (its troubleshooting pages); @upstash/redis throws them as an UpstashError.
    if (text === null) return [400, { error: "ERR max request size exceeded" }];
    if (++requests > requestLimit) return [400, { error: "ERR max requests limit exceeded." }];
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      return [400, { error: "ERR request body is not valid JSON" }];
    }
    const base64 = String(req.headers["upstash-encoding"] ?? "").toLowerCase() === "base64";
    try {
      return await route(body, base64);
    } catch (err) {
      if (err instanceof BadRequest) return [400, { error: err.message }];
      if (err instanceof RedisConnectionError) return [503, { error: err.message }];
      throw err;
    }
  }

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(undefined));
  });
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  let closing;
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    // Idempotent; also drops keep-alive connections, which would otherwise keep close() waiting.
    close: () =>
      (closing ??= new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
        redis.close();
        checked?.close();
      })),
    scriptStats: () => new Map([...stats].map(([sha, s]) => [sha, { ...s }])),
  };
}

/** The part of a key Redis Cluster hashes: the first {...} with something inside, else the whole key. @param {string} key */
function hashTagOf(key) {
  const open = key.indexOf("{");
  const close = open === -1 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/**
 * The request body as text, or null past `limit` bytes (read to its end,
 * not kept). Events rather than `for await`: the async iterator's machinery
 * cost more than the rest of a small request.
 * @param {http.IncomingMessage} req
 * @param {number} limit
 * @returns {Promise<string | null>}
 */
function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    let chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > limit) chunks = [];
      else chunks.push(chunk);
    });
    let ended = false;
    req.on("end", () => {
      ended = true;
      resolve(size > limit ? null : Buffer.concat(chunks).toString("utf8"));
    });
    req.on("error", reject);
    // A request cut off without an error event must not leave its handler waiting.
    req.on("close", () => {
      if (!ended) reject(new Error("the request was closed before its body ended"));
    });
  });
}

/** @param {http.ServerResponse} res @param {number} status @param {unknown} body */
function send(res, status, body) {
  if (res.destroyed) return; // the client gave up (e.g. timed out on a paused Redis)
  const json = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
  res.end(json);
}

// Standalone: node tools/upstash-gateway/server.mjs --redis-port 6379 --port 8079 --token xyz
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      "redis-host": { type: "string", default: "127.0.0.1" },
      "redis-port": { type: "string", default: "6379" },
      port: { type: "string", default: "8079" },
      token: { type: "string" },
      scripts: { type: "string", default: "upstash" },
      "key-rule": { type: "string", default: "enforce" },
    },
  });
  if (!values.token) {
    console.error(
      "usage: server.mjs --token <token> [--redis-host 127.0.0.1] [--redis-port 6379] [--port 8079] [--scripts upstash|verbatim] [--key-rule enforce|off]",
    );
    process.exit(2);
  }
  const gateway = await startGateway({
    redisHost: values["redis-host"],
    redisPort: Number(values["redis-port"]),
    token: values.token,
    port: Number(values.port),
    scripts: values.scripts === "verbatim" ? "verbatim" : "upstash",
    keyRule: values["key-rule"] === "off" ? "off" : "enforce",
  });
  console.log(gateway.url);
}
