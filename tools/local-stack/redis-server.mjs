// Finds (or, as root on Debian CI, installs) redis-server and runs throwaway instances of it:
// no persistence, loopback only, a temp dir each, with stop/pause/resume/restart for fault tests.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createRespClient } from "../upstash-gateway/resp-client.mjs";

const NOT_FOUND = "redis-server not found. Install it with: sudo apt-get install -y redis-server";

/**
 * @typedef {object} RedisServer
 * @property {number} port
 * @property {number | undefined} pid  pid of the current process (changes on restart)
 * @property {() => Promise<void>} stop  SIGTERM and wait for exit
 * @property {() => void} pause  SIGSTOP: connections stay open, replies never come
 * @property {() => void} resume  SIGCONT
 * @property {() => Promise<void>} restart  stop if running, start again on the same port
 *
 * @typedef {{ child: import("node:child_process").ChildProcess, dir: string, exited: Promise<unknown> }} Instance
 */

/** @type {string | undefined} */
let redisServerPath;

/** @returns {string} absolute path of redis-server */
export function findOrInstallRedisServer() {
  redisServerPath ??= which("redis-server") ?? install();
  return redisServerPath;
}

/** @param {string} name */
function which(name) {
  // /usr/sbin and friends are not always on a non-login PATH.
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/local/bin", "/usr/bin", "/usr/sbin"];
  for (const dir of dirs.filter(Boolean)) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

function install() {
  if (process.getuid?.() !== 0) throw new Error(NOT_FOUND);
  console.warn("redis-server not found; installing it with apt-get (running as root)");
  execFileSync("sh", ["-c", "apt-get update && apt-get install -y redis-server"], {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  const found = which("redis-server");
  if (!found) throw new Error(`apt-get install finished, but still: ${NOT_FOUND}`);
  return found;
}

/**
 * @param {{ port?: number }} [options]  port 0 picks a free one
 * @returns {Promise<RedisServer>}
 */
export async function startRedisServer({ port = 0 } = {}) {
  const bin = findOrInstallRedisServer();
  let instance;
  for (let attempt = 1; !instance; attempt++) {
    const chosen = port || (await freePort());
    try {
      instance = await launch(bin, chosen);
      port = chosen;
    } catch (err) {
      // A free port can be taken between our probe and redis binding it; try another.
      if (port || attempt >= 3) throw err;
    }
  }
  let current = instance;
  const fixedPort = port;
  return {
    port: fixedPort,
    get pid() {
      return current.child.pid;
    },
    stop: () => terminate(current),
    pause: () => void current.child.kill("SIGSTOP"),
    resume: () => void current.child.kill("SIGCONT"),
    async restart() {
      await terminate(current);
      current = await launch(bin, fixedPort);
    },
  };
}

/** Ask the OS for a free port, then release it for redis to bind. */
async function freePort() {
  const server = net.createServer();
  await new Promise((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {net.AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(() => resolve(undefined)));
  return port;
}

/** @param {string} bin @param {number} port @returns {Promise<Instance>} */
async function launch(bin, port) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-redis-"));
  const logfile = path.join(dir, "redis.log");
  // stdio ignored and a logfile instead: an unread stdout pipe could fill up and stall redis.
  const child = spawn(
    bin,
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--daemonize",
      "no",
      "--protected-mode",
      "no",
      "--dir",
      dir,
      "--logfile",
      logfile,
    ],
    { stdio: "ignore" },
  );
  const exited = new Promise((resolve) => {
    child.once("exit", resolve);
    child.once("error", resolve); // e.g. ENOENT; there will be no 'exit'
  });
  const instance = { child, dir, exited };
  track(instance);
  try {
    await waitUntilReady(port, child, exited);
  } catch (err) {
    const log = fs.existsSync(logfile) ? fs.readFileSync(logfile, "utf8").trim().split("\n").slice(-5).join("\n") : "";
    await terminate(instance);
    throw new Error(`redis-server on port ${port}: ${/** @type {Error} */ (err).message}${log ? `\n${log}` : ""}`);
  }
  return instance;
}

/**
 * Poll until *our* process answers PING. Checking its pid guards against a foreign server
 * that grabbed the port first (our redis would then exit with "Address already in use").
 * @param {number} port @param {import("node:child_process").ChildProcess} child @param {Promise<unknown>} exited
 */
async function waitUntilReady(port, child, exited) {
  let gone = false;
  exited.then(() => (gone = true));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (gone) throw new Error("exited before answering PING");
    const client = createRespClient({ port });
    try {
      const attempt = client.exec([["PING"], ["INFO", "server"]]);
      const replies = await Promise.race([attempt, sleep(1000, null, { ref: false })]);
      if (replies?.[0] === "PONG") {
        if (String(replies[1]).includes(`process_id:${child.pid}\r\n`)) return;
        throw new Error("port is served by another process");
      }
    } catch (err) {
      if (/another process/.test(/** @type {Error} */ (err).message)) throw err;
      // connection refused: not listening yet
    } finally {
      client.close();
    }
    await sleep(20);
  }
  throw new Error("did not answer PING within 10 s");
}

/** SIGTERM (plus SIGCONT, as a paused process would never act on it), SIGKILL after 5 s. */
async function terminate(/** @type {Instance} */ { child, dir, exited }) {
  if (child.exitCode === null && child.signalCode === null && child.pid) {
    child.kill("SIGTERM");
    child.kill("SIGCONT");
    const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(killer);
  }
  live.delete(child);
  fs.rmSync(dir, { recursive: true, force: true });
}

// Last line of defence: whatever exits this process (test run end, crash, forgotten stop()),
// no redis-server is left behind. 'exit' handlers must be synchronous, hence SIGKILL.
/** @type {Map<import("node:child_process").ChildProcess, string>} */
const live = new Map();
let exitHookInstalled = false;

/** @param {Instance} instance */
function track({ child, dir }) {
  live.set(child, dir);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const [proc, tmp] of live) {
      try {
        if (proc.pid) process.kill(proc.pid, "SIGKILL");
      } catch {}
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
}
