// The local stack: a throwaway redis-server plus the Upstash REST gateway in front of it.
// Also a small HTTP control server so tests running inside workerd (which cannot spawn
// processes) can create their own disposable stacks and break them on purpose.
import { randomBytes } from "node:crypto";
import http from "node:http";
import { createRespClient } from "../upstash-gateway/resp-client.mjs";
import { startGateway } from "../upstash-gateway/server.mjs";
import { startRedisServer } from "./redis-server.mjs";

/**
 * @typedef {object} LocalStack
 * @property {import("./redis-server.mjs").RedisServer} redis
 * @property {import("../upstash-gateway/server.mjs").Gateway} gateway
 * @property {string} url  UPSTASH_REDIS_REST_URL
 * @property {string} token  UPSTASH_REDIS_REST_TOKEN
 * @property {() => Promise<void>} stop
 */

/**
 * @param {{ token?: string, gateway?: Omit<Parameters<typeof startGateway>[0], "redisHost" | "redisPort" | "token" | "port"> }} [options]
 *   token defaults to random hex; gateway: how it runs scripts and Upstash's limits (server.mjs)
 * @returns {Promise<LocalStack>}
 */
export async function startLocalStack({ token = randomBytes(16).toString("hex"), gateway: gatewayOptions = {} } = {}) {
  const redis = await startRedisServer();
  const gateway = await startGateway({ ...gatewayOptions, redisHost: "127.0.0.1", redisPort: redis.port, token }).catch(async (err) => {
    await redis.stop();
    throw err;
  });
  return {
    redis,
    gateway,
    url: gateway.url,
    token,
    async stop() {
      await gateway.close();
      await redis.stop();
    },
  };
}

/** Fault injections a test can request for its own stack: POST /stacks/:id/<action>. */
/** @type {Record<string, (stack: LocalStack) => unknown>} */
const ACTIONS = {
  "redis/stop": (s) => s.redis.stop(),
  "redis/start": (s) => s.redis.restart(),
  "redis/pause": (s) => s.redis.pause(),
  "redis/resume": (s) => s.redis.resume(),
  "gateway/stop": (s) => s.gateway.close(),
  // Redis at its memory limit: every write that could grow memory is refused (OOM), reads still answer.
  "redis/full": (s) =>
    redisConfig(s, [
      ["CONFIG", "SET", "maxmemory-policy", "noeviction"],
      ["CONFIG", "SET", "maxmemory", "1"],
    ]),
  "redis/roomy": (s) => redisConfig(s, [["CONFIG", "SET", "maxmemory", "0"]]),
};

/** Sends CONFIG commands to a stack's redis-server directly (the gateway, as Upstash, allows no CONFIG). */
async function redisConfig(/** @type {LocalStack} */ stack, /** @type {string[][]} */ commands) {
  const client = createRespClient({ port: stack.redis.port });
  try {
    await client.exec(commands);
  } finally {
    client.close();
  }
}

/**
 * Routes: POST /stacks[?scripts=verbatim] -> {id,url,token} (verbatim: the gateway passes
 * scripts to Redis unchanged, as a plain REST proxy in front of stock Redis does);
 * POST /stacks/:id/(redis/stop|redis/start|
 * redis/pause|redis/resume|redis/full|redis/roomy|gateway/stop) -> {ok:true}; DELETE /stacks/:id -> {ok:true}.
 * Unauthenticated: it listens on 127.0.0.1 only and exists only during a test run.
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export async function startStackControl() {
  /** @type {Map<string, Promise<LocalStack>>} */
  const stacks = new Map();
  let nextId = 1;

  /** @param {string} method @param {string} path @param {URLSearchParams} query @returns {Promise<[number, unknown]>} */
  async function handle(method, path, query) {
    if (method === "POST" && path === "/stacks") {
      const id = `s${nextId++}`;
      const starting = startLocalStack(query.get("scripts") === "verbatim" ? { gateway: { scripts: "verbatim" } } : {});
      stacks.set(id, starting); // registered before it resolves, so close() can stop it too
      starting.catch(() => stacks.delete(id));
      const { url, token } = await starting;
      return [200, { id, url, token }];
    }
    const match = /^\/stacks\/([^/]+)(?:\/(.+))?$/.exec(path);
    const stack = match && stacks.get(match[1]);
    if (!match || !stack) return [404, { error: `no such stack or route: ${method} ${path}` }];
    const [, id, action] = match;
    if (method === "DELETE" && !action) {
      stacks.delete(id);
      await (await stack).stop();
      return [200, { ok: true }];
    }
    if (method === "POST" && action && ACTIONS[action]) {
      await ACTIONS[action](await stack);
      return [200, { ok: true }];
    }
    return [404, { error: `unknown action: ${method} ${path}` }];
  }

  const server = http.createServer(async (req, res) => {
    let status, body;
    try {
      const url = new URL(req.url ?? "/", "http://control");
      [status, body] = await handle(req.method ?? "GET", url.pathname, url.searchParams);
    } catch (err) {
      [status, body] = [500, { error: /** @type {Error} */ (err).message }];
    }
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());

  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      });
      const all = [...stacks.values()];
      stacks.clear();
      await Promise.allSettled(all.map(async (s) => (await s).stop()));
    },
  };
}
