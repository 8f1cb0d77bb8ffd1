/**
 * Everything the bench runs against, started and stopped here:
 * - the local stack (redis-server + the project's Upstash REST gateway) in a
 *   child process (bench/localStackChild.mjs);
 * - the Worker bundled once (wrangler deploy --dry-run), so edits to src/
 *   during the run cannot reload it, then served by two `wrangler dev
 *   --no-bundle` instances on free ports: one on the Redis store (Upstash
 *   vars pointing at the gateway), one on the Durable store (no Upstash vars).
 * Each wrangler runs in its own process group (wrangler -> workerd), stopped
 * by group id: SIGTERM, then SIGKILL after 5 s, and SIGKILL on process exit.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sleep, withTimeout } from "./loop";
import { rawFetch } from "./roundTrips";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const WRANGLER_JS = path.join(ROOT, "node_modules/wrangler/bin/wrangler.js");

export interface Gateway {
  url: string;
  token: string;
  redisPort: number;
}

export interface BenchStack {
  gateway: Gateway;
  /** Base URLs of the Worker on each store. */
  workers: { redis: string; durable: string };
  apiKey: string;
  stop(): Promise<void>;
}

export function wranglerVersion(): string {
  return JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules/wrangler/package.json"), "utf8")).version;
}

/** Process groups we lead and temp dirs we made; cleaned up if the bench exits without stop(). */
const groups = new Set<ChildProcess>();
const dirs = new Set<string>();
process.once("exit", () => {
  for (const child of groups) {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {}
  }
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

export async function startBenchStack(): Promise<BenchStack> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-bench-"));
  dirs.add(dir);
  const stoppers: Array<() => Promise<void>> = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const s of stoppers.reverse()) await s().catch((err) => console.error(`bench: stopping: ${err.message}`));
    fs.rmSync(dir, { recursive: true, force: true });
    dirs.delete(dir);
  };
  try {
    const [gateway] = await Promise.all([startGatewayChild(stoppers), buildWorker(dir)]);
    const apiKey = randomBytes(16).toString("hex");
    const [p1, p2, i1, i2] = await freePorts(4);
    const common = [`API_KEYS:bench=${apiKey}`, "WEBHOOK_SECRET:holdfast-bench-webhook-secret"];
    const [redis, durable] = await Promise.all([
      startWorker(dir, "redis", p1, i1, [...common, `UPSTASH_REDIS_REST_URL:${gateway.url}`, `UPSTASH_REDIS_REST_TOKEN:${gateway.token}`], stoppers),
      startWorker(dir, "durable", p2, i2, common, stoppers),
    ]);
    return { gateway, workers: { redis, durable }, apiKey, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startGatewayChild(stoppers: Array<() => Promise<void>>): Promise<Gateway> {
  const child = spawn(process.execPath, [path.join(ROOT, "bench/localStackChild.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  stoppers.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin?.end(); // the child stops its stack and exits
    const killer = setTimeout(() => child.kill("SIGTERM"), 8000);
    await exited;
    clearTimeout(killer);
  });
  const line = new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stdout!.on("data", (d) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl >= 0) resolve(buf.slice(0, nl));
    });
    child.once("exit", (code) => reject(new Error(`local stack process exited (${code}) before it was ready`)));
  });
  return JSON.parse(await withTimeout(line, 20_000, "starting the local stack")) as Gateway;
}

/** Bundles src/worker.ts once with wrangler's own build, into dir/build. */
async function buildWorker(dir: string): Promise<void> {
  const out = path.join(dir, "build");
  const log = path.join(dir, "build.log");
  const fd = fs.openSync(log, "w");
  const child = spawn(process.execPath, [WRANGLER_JS, "deploy", "--dry-run", "--outdir", out], {
    cwd: ROOT,
    stdio: ["ignore", fd, fd],
    env: wranglerEnv(),
  });
  fs.closeSync(fd);
  const code = await withTimeout(new Promise<number | null>((r) => child.once("exit", r)), 90_000, "wrangler build").catch((err) => {
    child.kill("SIGKILL");
    throw err;
  });
  if (code !== 0) throw new Error(`wrangler deploy --dry-run failed (${code}):\n${tail(log)}`);
  const main = fs.readdirSync(out).find((f) => f.endsWith(".js"));
  if (!main) throw new Error(`wrangler build wrote no .js file in ${out}`);
  const toml = fs.readFileSync(path.join(ROOT, "wrangler.toml"), "utf8");
  const rewritten = toml.replace(/^main\s*=.*$/m, `main = "build/${main}"`);
  if (rewritten === toml) throw new Error("wrangler.toml has no `main = ...` line to point at the bundle");
  fs.writeFileSync(path.join(dir, "wrangler.toml"), rewritten);
}

async function startWorker(
  dir: string,
  store: "redis" | "durable",
  port: number,
  inspectorPort: number,
  vars: string[],
  stoppers: Array<() => Promise<void>>,
): Promise<string> {
  const log = path.join(dir, `wrangler-${store}.log`);
  const fd = fs.openSync(log, "w");
  const args = [
    WRANGLER_JS, "dev", "-c", path.join(dir, "wrangler.toml"), "--no-bundle",
    "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort),
    "--persist-to", path.join(dir, `state-${store}`), "--show-interactive-dev-session=false", "--log-level", "warn",
  ];
  for (const v of vars) args.push("--var", v);
  const child = spawn(process.execPath, args, { cwd: dir, detached: true, stdio: ["ignore", fd, fd], env: wranglerEnv() });
  fs.closeSync(fd);
  groups.add(child);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  stoppers.push(() => stopGroup(child, exited));

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev (${store}) exited with ${child.exitCode}:\n${tail(log)}`);
    try {
      const res = await rawFetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
      const body = (await res.json()) as { store?: string };
      if (res.ok && body.store === store) return url;
      if (body.store && body.store !== store) throw new Error(`wrangler dev on ${url} serves the ${body.store} store, expected ${store}`);
    } catch (err) {
      if (err instanceof Error && /expected/.test(err.message)) throw err;
    }
    if (Date.now() > deadline) throw new Error(`wrangler dev (${store}) did not answer /healthz within 60 s:\n${tail(log)}`);
    await sleep(200);
  }
}

async function stopGroup(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  const kill = (sig: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, sig);
    } catch {}
  };
  if (child.exitCode === null && child.signalCode === null) {
    kill("SIGTERM");
    await Promise.race([exited, sleep(5000)]);
  }
  kill("SIGKILL"); // whatever of the group is left (workerd), if anything
  groups.delete(child);
}

function wranglerEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    // No network here: without this miniflare keeps trying to fetch Request.cf.
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    FORCE_COLOR: "0",
  };
}

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<net.Server>((resolve, reject) => {
      const s = net.createServer();
      s.once("error", reject).listen(0, "127.0.0.1", () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

function tail(file: string, lines = 15): string {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
