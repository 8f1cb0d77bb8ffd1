// `npm start` as a user runs it (tools/dev/start.mjs, a real process with its
// defaults): `npm start` and `npm run start:redis` side by side, each with its
// own state; the library and the local Worker contend for one lock on one
// Redis, a busy port says what to do with the command that was run, and
// `npm run dev` prints its URL only once the Worker answers.
import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { Redis } from "@upstash/redis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LockedError, Mutex } from "holdfast";
import { childPort } from "../support/childPort.mjs";
import { until } from "../support/workerServers";

const START = path.resolve("tools/dev/start.mjs");

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const running: Started[] = [];

/**
 * Runs start.mjs in its own process group (wrangler dev's children too), with API_KEYS unset as on a fresh clone (or as
 * `vars` say), and bundling the Worker itself as it does for a user (not asking the test run for its bundle).
 */
function start(args: string[], port: number, vars: Record<string, string> = {}): Started {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
  delete env.API_KEYS;
  delete env.HOLDFAST_WORKER_BUNDLE_URL;
  Object.assign(env, vars);
  const child = spawn(process.execPath, [START, ...args], { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const started = { child, output: () => out, exited };
  running.push(started);
  return started;
}

afterEach(async () => {
  for (const s of running.splice(0)) {
    if (s.child.exitCode === null && s.child.pid) process.kill(-s.child.pid, "SIGTERM");
    await s.exited;
  }
});

/** The line start.mjs prints once the Worker is served: "holdfast (...) at URL"; the "try:" line ends what it prints. */
const SERVED = /^holdfast \(.*\) at (http:\S+)$/m;
const PRINTED = /^try: curl/m;

/** Waits for a started script's "try:" line: its URL and API key, and everything it printed. */
async function served(s: Started): Promise<{ url: string; key: string; out: string }> {
  const out = await until(s.output, (o) => PRINTED.test(o) || s.child.exitCode !== null, 90_000);
  const url = SERVED.exec(out)?.[1];
  const key = /^API key: (\S+)/m.exec(out)?.[1];
  expect({ url, key }, out).toMatchObject({ url: expect.any(String), key: expect.any(String) });
  return { url: url as string, key: key as string, out };
}

// Both started at once, as a reader of the quick start has them (npm start from quick start 1 still running
// when quick start 2 or an example runs npm run start:redis), each on its own port.
describe("npm start and npm run start:redis side by side", () => {
  const origin = "http://localhost:8894";
  let durable: Started;
  let redis: Started;
  let onDurable: { url: string; key: string; out: string };
  let onRedis: { url: string; key: string; out: string };

  beforeAll(async () => {
    const [a, b] = [await childPort(), await childPort()];
    durable = start([], a, { CORS_ORIGINS: `default=${origin}`, TOKEN_SECRETS: `default=${"s".repeat(40)}` });
    redis = start(["--redis"], b);
    running.splice(0); // stopped in afterAll, not after each case
    [onDurable, onRedis] = await Promise.all([served(durable), served(redis)]);
  }, 120_000);

  afterAll(async () => {
    for (const s of [durable, redis]) {
      if (s && s.child.exitCode === null && s.child.pid) process.kill(-s.child.pid, "SIGTERM");
      await s?.exited;
    }
  });

  it("by default the library and the local Worker (Redis store) contend for one lock", async () => {
    const { url, key, out } = onRedis;
    const env = /UPSTASH_REDIS_REST_URL=(\S+) UPSTASH_REDIS_REST_TOKEN=(\S+)/.exec(out);
    expect(env, out).not.toBeNull();
    const redisClient = new Redis({ url: env?.[1] as string, token: env?.[2] as string });
    const lock = new Mutex(redisClient, "shared"); // no namespace: the library's default
    const acquireOnWorker = () =>
      fetch(`${url}/v1/locks/shared/acquire`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
        body: JSON.stringify({ ttlMs: 30_000 }),
      });

    const onWorker = await acquireOnWorker();
    expect(onWorker.status).toBe(200);
    const { token, fence } = (await onWorker.json()) as { token: string; fence: number };
    await expect(lock.acquire({ ttlMs: 30_000 })).rejects.toBeInstanceOf(LockedError);

    const released = await fetch(`${url}/v1/locks/shared/release`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ token }),
    });
    expect(released.status).toBe(200);
    const grant = await lock.acquire({ ttlMs: 30_000 });
    expect(grant.fence).toBeGreaterThan(fence); // one fence sequence: the same lock
    expect((await acquireOnWorker()).status).toBe(409);
    await lock.release(grant.token);
  });

  it("honours the browser settings: a listed origin's preflight is answered for it, a token is minted; GET / says where to go", async () => {
    const { url, key } = onDurable;
    const preflight = await fetch(`${url}/v1/locks/cart-5/acquire`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(origin);
    const minted = await fetch(`${url}/v1/tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ prefix: "cart-", operations: ["acquire", "release"], ttlMs: 60_000 }),
    });
    const body = (await minted.json()) as { token?: string };
    expect(minted.status, JSON.stringify(body)).toBe(200);
    expect(body.token).toMatch(/^hfs1\./);
    const root = await fetch(`${url}/`);
    expect(root.status).toBe(200);
    expect(await root.json()).toMatchObject({ console: `${url}/console`, health: `${url}/healthz` });
  });

  it("each keeps its own state, and locks taken on both at once leave no SQLITE_BUSY in either log", async () => {
    expect(onDurable.out).toMatch(/^state: \.wrangler\/state\/holdfast-start \(/m);
    expect(onRedis.out).toMatch(/^state: \.wrangler\/state\/holdfast-start-redis \(/m);
    // The same names on both, at once: each Worker's lock objects write their state (the Durable store's
    // leases, the Redis store's lines), which one shared SQLite file would refuse one of them.
    const cycle = async ({ url, key }: { url: string; key: string }, name: string) => {
      const auth = { authorization: `Bearer ${key}` };
      const got = await fetch(`${url}/v1/locks/${name}/acquire`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ ttlMs: 10_000, waitMs: 5_000 }),
      });
      expect(got.status, await got.clone().text()).toBe(200);
      const { token } = (await got.json()) as { token: string };
      const released = await fetch(`${url}/v1/locks/${name}/release`, { method: "POST", headers: auth, body: JSON.stringify({ token }) });
      expect(released.status).toBe(200);
    };
    const names = Array.from({ length: 8 }, (_, i) => `side-by-side-${i}`);
    await Promise.all(names.flatMap((name) => [cycle(onDurable, name), cycle(onDurable, name), cycle(onRedis, name), cycle(onRedis, name)]));
    for (const s of [durable, redis]) expect(s.output()).not.toMatch(/SQLITE_BUSY/);
  });
});

describe("npm start", () => {
  it("a busy PORT is named, with a free one to set instead", async () => {
    const holder = net.createServer();
    const port = await new Promise<number>((resolve) => holder.listen(0, "127.0.0.1", () => resolve((holder.address() as net.AddressInfo).port)));
    try {
      // The hint is a line to run: the command that was run, not another one.
      const s = start(["--redis"], port);
      expect(await s.exited).toBe(1);
      expect(s.output()).toMatch(
        new RegExp(`^npm run start:redis: port ${port} is busy; set PORT to a free one, e\\.g\\. PORT=\\d+ npm run start:redis$`, "m"),
      );
    } finally {
      holder.close();
    }
  });

  it("npm run dev prints the URL once wrangler dev answers there", { timeout: 120_000 }, async () => {
    const s = start(["--dev"], await childPort());
    const out = await until(s.output, (o) => PRINTED.test(o) || s.child.exitCode !== null, 90_000);
    const url = SERVED.exec(out)?.[1];
    expect(url, out).toBeDefined();
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
  });
});
