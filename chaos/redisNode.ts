/**
 * A redis-server for the fault suite, behind its own Upstash gateway and a
 * fault proxy: persistent (append-only file, fsync on every write) so that a
 * restart loses nothing unless the fault says so, with its wall clock movable
 * through the clockshift shim.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { findOrInstallRedisServer } from "../tools/local-stack/redis-server.mjs";
import { createRespClient } from "../tools/upstash-gateway/resp-client.mjs";
import { startGateway } from "../tools/upstash-gateway/server.mjs";
import { ClockOffset, clockShiftLibrary } from "./clock/clockShift";
import { type FaultProxy, startFaultProxy } from "./faultProxy";
import { freePort, sleep } from "./time";

export interface RedisNode {
  /** The Upstash REST URL clients use: the fault proxy in front of the gateway. */
  url: string;
  token: string;
  proxy: FaultProxy;
  /** SIGSTOP: connections stay open, nothing answers. */
  pause(): void;
  resume(): void;
  /** SIGKILL: down, connections refused. */
  kill(): Promise<void>;
  /** Start again after kill, with what the append-only file kept. */
  start(): Promise<void>;
  /** A crash and a start: nothing lost (every write was fsynced). */
  restart(): Promise<void>;
  /** A crash, the data directory wiped, a start: everything lost. */
  restartLosingData(): Promise<void>;
  /** Move redis-server's wall clock (ms; 0 is the true time). */
  shiftClock(ms: number): void;
  /** One command straight to redis-server (not through the gateway). */
  command(...args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

export async function startRedisNode(label: string): Promise<RedisNode> {
  const bin = findOrInstallRedisServer();
  const shim = clockShiftLibrary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `holdfast-chaos-${label}-`));
  const dataDir = path.join(dir, "data");
  fs.mkdirSync(dataDir);
  const clock = new ClockOffset(dir);
  const port = await freePort();
  const token = `chaos-${label}-token`;
  let child: ChildProcess | undefined;

  const launch = async () => {
    child = spawn(
      bin,
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--dir",
        dataDir,
        "--protected-mode",
        "no",
        "--logfile",
        path.join(dir, "redis.log"),
      ],
      { stdio: "ignore", env: { ...process.env, LD_PRELOAD: shim, HOLDFAST_CLOCK_OFFSET_FILE: clock.file } },
    );
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if ((await ping(port)) === "PONG") return;
      await sleep(20);
    }
    throw new Error(`redis-server ${label} did not start (see ${dir}/redis.log)`);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await exited;
  };
  await launch();
  const gateway = await startGateway({ redisPort: port, token });
  const proxy = await startFaultProxy(gateway.url);
  const onExit = () => child?.kill("SIGKILL");
  process.once("exit", onExit);

  return {
    url: proxy.url,
    token,
    proxy,
    pause: () => void child?.kill("SIGSTOP"),
    resume: () => void child?.kill("SIGCONT"),
    kill,
    start: launch,
    async restart() {
      await kill();
      await launch();
    },
    async restartLosingData() {
      await kill();
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.mkdirSync(dataDir);
      await launch();
    },
    shiftClock: (ms) => clock.set(ms),
    command: (...args) => respCommand(port, args),
    async close() {
      child?.kill("SIGCONT");
      await kill();
      await proxy.close();
      await gateway.close();
      process.removeListener("exit", onExit);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function ping(port: number): Promise<unknown> {
  return respCommand(port, ["PING"]).catch(() => undefined);
}

async function respCommand(port: number, args: string[]): Promise<unknown> {
  const client = createRespClient({ port });
  try {
    const [reply] = await Promise.race([client.exec([args]), sleep(1000).then(() => [new Error("no answer within 1 s")])]);
    if (reply instanceof Error) throw reply;
    return reply;
  } finally {
    client.close();
  }
}
