// Local stand-in for the Upstash Redis REST API, in front of a real redis-server, so tests
// and `wrangler dev` exercise the real @upstash/redis client without a cloud account.
// Implements POST /, /pipeline and /multi-exec with Bearer auth and Upstash-Encoding: base64.
import http from "node:http";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { createRespClient, RedisConnectionError, RedisReplyError } from "./resp-client.mjs";
import { BadRequest, toCommand, toCommands, toEntry, replyToJson } from "./wire.mjs";

/** @typedef {import("./resp-client.mjs").Reply} Reply */
/** @typedef {{ url: string, port: number, close: () => Promise<void> }} Gateway */

/**
 * @param {{ redisHost?: string, redisPort: number, token: string, port?: number }} options
 * @returns {Promise<Gateway>}
 */
export async function startGateway({ redisHost = "127.0.0.1", redisPort, token, port = 0 }) {
  if (!token) throw new Error("startGateway: a token is required");
  const redis = createRespClient({ host: redisHost, port: redisPort });

  /** @type {Record<string, (body: unknown, base64: boolean) => Promise<[number, unknown]>>} */
  const routes = {
    // Single command: errors are a 400 whose text is Redis's own message.
    "/": async (body, base64) => {
      const [reply] = await redis.exec([toCommand(body)]);
      return reply instanceof RedisReplyError ? [400, { error: reply.message }] : [200, { result: replyToJson(reply, base64) }];
    },
    // Pipeline: always 200, with a {result} or {error} per command.
    "/pipeline": async (body, base64) => {
      const replies = await redis.exec(toCommands(body));
      return [200, replies.map((reply) => toEntry(reply, base64))];
    },
    // Transaction: exec() writes MULTI..EXEC in one go, so no other request interleaves.
    "/multi-exec": async (body, base64) => {
      const replies = await redis.exec([["MULTI"], ...toCommands(body), ["EXEC"]]);
      const exec = replies[replies.length - 1];
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
    let body;
    try {
      body = JSON.parse(await readBody(req));
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
      })),
  };
}

/**
 * The request body as text. Events rather than `for await`: the async
 * iterator's machinery cost more than the rest of a small request.
 * @param {http.IncomingMessage} req
 * @returns {Promise<string>}
 */
function readBody(req) {
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    let ended = false;
    req.on("end", () => {
      ended = true;
      resolve(Buffer.concat(chunks).toString("utf8"));
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
    },
  });
  if (!values.token) {
    console.error("usage: server.mjs --token <token> [--redis-host 127.0.0.1] [--redis-port 6379] [--port 8079]");
    process.exit(2);
  }
  const gateway = await startGateway({
    redisHost: values["redis-host"],
    redisPort: Number(values["redis-port"]),
    token: values.token,
    port: Number(values.port),
  });
  console.log(gateway.url);
}
