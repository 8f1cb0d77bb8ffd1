/**
 * Everything the bench runs against, started and stopped here:
 * - the local stack (redis-server + the project's Upstash REST gateway) in a
 *   child process (bench/localStackChild.mjs), so the gateway does not share
 *   an event loop with the bench's clients;
 * - the Worker, bundled once per process and served by workerd
 *   (tools/serve-worker: bare `workerd serve` by default, Miniflare with
 *   HOLDFAST_SERVE_ENGINE=miniflare), as production runs it: no `wrangler dev`
 *   proxy worker, no inspector. Two instances on free ports: one on the Redis
 *   store (Upstash vars pointing at the gateway), one on the Durable store
 *   (no Upstash vars), Durable Object state in a temp dir dropped on stop;
 * - when asked, the relay (bench/relayWorker: the handoff floor, no holdfast
 *   code), served the same way.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { resolveBesideWrangler, resolveEngine, startWorkerServer } from "../tools/serve-worker/serve.mjs";
import { withTimeout } from "./loop";
import { rawFetch } from "./roundTrips";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export interface Gateway {
  url: string;
  token: string;
  redisPort: number;
}

export interface BenchStack {
  gateway: Gateway;
  /** Base URLs of the Worker on each store. */
  workers: { redis: string; durable: string };
  /** Base URL of the relay Worker (bench/relayWorker), when startBenchStack was asked for it. */
  relay?: string;
  apiKey: string;
  /** The vars each store's Worker was served with (another server of it, such as under callgrind, takes the same). */
  vars: { redis: Record<string, string>; durable: Record<string, string> };
  stop(): Promise<void>;
}

/** Versions of what serves the Worker, for the bench header. */
export function servingVersions(): string {
  // workerd and miniflare as wrangler resolves them (the ones that bundle and serve).
  const version = (pkg: string) =>
    JSON.parse(fs.readFileSync(pkg === "wrangler" ? path.join(ROOT, "node_modules/wrangler/package.json") : packageJsonBesideWrangler(pkg), "utf8"))
      .version;
  const engine = resolveEngine() === "miniflare" ? `through miniflare ${version("miniflare")}` : "bare (workerd serve)";
  return `wrangler ${version("wrangler")} (bundle), workerd ${version("workerd")} ${engine}`;
}

/** The package.json of a package wrangler depends on, found from its resolved entry. */
function packageJsonBesideWrangler(pkg: string): string {
  let dir = path.dirname(resolveBesideWrangler(pkg));
  while (!fs.existsSync(path.join(dir, "package.json")) || JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).name !== pkg) {
    dir = path.dirname(dir);
  }
  return path.join(dir, "package.json");
}

export async function startBenchStack(options: { relay?: boolean } = {}): Promise<BenchStack> {
  const stoppers: Array<() => Promise<void>> = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const s of stoppers.reverse()) await s().catch((err) => console.error(`bench: stopping: ${err.message}`));
  };
  try {
    const gateway = await startGatewayChild(stoppers);
    const apiKey = randomBytes(16).toString("hex");
    const common = {
      API_KEYS: `bench=${apiKey}`,
      WEBHOOK_SECRET: "holdfast-bench-webhook-secret",
      ONEXPIRE_HOSTS: "*=127.0.0.1",
      ONEXPIRE_ALLOW_HTTP_LOCALHOST: "1",
      // Room for section 9 (bench/scale.ts): 10,000 waiters and their holder on one lock, and 1,000
      // locks of one namespace with a holder and 10 waiters each, whatever the defaults are.
      MAX_WAITERS_PER_LOCK: "10001",
      MAX_SOCKETS_PER_NAMESPACE: "20000",
      // And for its crowds opened with one key (250 handshakes at a time): no rate of new sockets to wait out.
      SOCKET_OPEN_BURST: "100000",
      SOCKET_OPENS_PER_SECOND: "100000",
    };
    // Sequential: the first call bundles, the second reuses the bundle.
    const vars = { redis: { ...common, UPSTASH_REDIS_REST_URL: gateway.url, UPSTASH_REDIS_REST_TOKEN: gateway.token }, durable: common };
    const redis = await startWorker("redis", vars.redis, stoppers);
    const durable = await startWorker("durable", vars.durable, stoppers);
    const relay = options.relay ? await startRelay(stoppers) : undefined;
    return { gateway, workers: { redis, durable }, relay, apiKey, vars, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startGatewayChild(stoppers: Array<() => Promise<void>>): Promise<Gateway> {
  const stack = await startLocalStackProcess();
  stoppers.push(stack.stop);
  return stack.gateway;
}

/** The local stack in its own process (bench/localStackChild.mjs): its gateway, the process id, and how to stop it. */
export async function startLocalStackProcess(): Promise<{ gateway: Gateway; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [path.join(ROOT, "bench/localStackChild.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin?.end(); // the child stops its stack and exits
    const killer = setTimeout(() => child.kill("SIGTERM"), 8000);
    await exited;
    clearTimeout(killer);
  };
  const line = new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stdout!.on("data", (d) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl >= 0) resolve(buf.slice(0, nl));
    });
    child.once("exit", (code) => reject(new Error(`local stack process exited (${code}) before it was ready`)));
  });
  try {
    const gateway = JSON.parse(await withTimeout(line, 20_000, "starting the local stack")) as Gateway;
    return { gateway, pid: child.pid as number, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Serves the Worker and checks, through /healthz, that it runs on the expected store. */
async function startWorker(store: "redis" | "durable", vars: Record<string, string>, stoppers: Array<() => Promise<void>>): Promise<string> {
  const server = await withTimeout(startWorkerServer({ vars }), 120_000, `serving the Worker (${store} store)`);
  stoppers.push(() => server.stop());
  const res = await rawFetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as { store?: string };
  if (!res.ok || body.store !== store)
    throw new Error(`Worker at ${server.url}: /healthz ${res.status} ${JSON.stringify(body)}, expected store ${store}`);
  return server.url;
}

/** The relay Worker (bench/relayWorker), checked by asking one lock's line length. */
async function startRelay(stoppers: Array<() => Promise<void>>): Promise<string> {
  const server = await withTimeout(
    startWorkerServer({ vars: {}, projectDir: path.join(ROOT, "bench/relayWorker") }),
    120_000,
    "serving the relay Worker",
  );
  stoppers.push(() => server.stop());
  const res = await rawFetch(`${server.url}/v1/locks/ready`, { signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as { waiters?: number };
  if (!res.ok || body.waiters !== 0) throw new Error(`relay Worker at ${server.url}: ${res.status} ${JSON.stringify(body)}, expected { waiters: 0 }`);
  return server.url;
}
