/**
 * The ceiling: raw EVALSHA throughput of the bench's redis-server for the
 * mutex acquire script, measured with redis-benchmark (no HTTP, no gateway,
 * pipelined over 50 connections). Skipped, with the reason, when
 * redis-benchmark is not installed.
 *
 * The script, its KEYS and ARGV are recorded from one real library try-lock
 * rather than written out here, so the ceiling keeps measuring what the
 * library sends while the scripts' arguments change.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Redis } from "@upstash/redis";
import { Mutex } from "../src/index";
import { type LuaScriptName, luaScriptSha1, luaScripts } from "../src/store/redis/scripts.generated";
import { withoutKeyLockingFlag } from "../tools/upstash-gateway/scripts.mjs";
import { NAMESPACE, TTL_MS } from "./clients";
import { withTimeout } from "./loop";
import { gatewayCommand } from "./redisInfo";
import type { Gateway } from "./stack";

const INSTALL = "sudo apt-get install -y redis-tools";
export const CEILING_REQUESTS = 50_000;
export const CEILING_CLIENTS = 50;
const PROBE = "bench-ceiling-probe";

export type Ceiling = { ok: true; rps: number; p50?: string; command: string } | { ok: false; reason: string };

export function findRedisBenchmark(): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/bin", "/usr/local/bin"];
  for (const d of dirs.filter(Boolean)) {
    const p = path.join(d, "redis-benchmark");
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {}
  }
  return undefined;
}

interface ScriptCall {
  source: string;
  keys: string[];
  args: string[];
}

/** The first script call a library try-lock makes (the acquire), seen through a wrapped client. */
async function recordAcquire(redis: Redis): Promise<ScriptCall> {
  const calls: ScriptCall[] = [];
  const sources = new Map(Object.entries(luaScriptSha1).map(([name, sha]) => [sha, luaScripts[name as LuaScriptName]]));
  const recording = new Proxy(redis, {
    get(target, prop) {
      if (prop === "evalsha")
        return (sha: string, keys: string[], args: string[]) => {
          calls.push({ source: sources.get(sha) ?? "", keys, args });
          return target.evalsha(sha, keys, args);
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const mutex = new Mutex(recording, PROBE, { namespace: NAMESPACE });
  const grant = await mutex.acquire({ ttlMs: TTL_MS });
  await mutex.release(grant.token);
  if (!calls.length || !calls[0].source) throw new Error("the library's acquire ran no script of ours");
  return calls[0];
}

export async function measureCeiling(gw: Gateway, redis: Redis): Promise<Ceiling> {
  const bin = findRedisBenchmark();
  if (!bin) return { ok: false, reason: `redis-benchmark not found on PATH or in /usr/bin (install it with: ${INSTALL})` };
  const call = await recordAcquire(redis);
  // redis-benchmark talks to redis-server itself, which knows the script as the gateway runs it (without Upstash's flag).
  const sha = String(await gatewayCommand(gw, ["SCRIPT", "LOAD", withoutKeyLockingFlag(call.source) ?? call.source]));
  // A random lock name per key, so most calls grant a free lock as a try-lock would.
  const keys = call.keys.map((k) => k.replaceAll(PROBE, "bench-ceiling-__rand_int__"));
  const args = [
    "-p",
    String(gw.redisPort),
    "-q",
    "-n",
    String(CEILING_REQUESTS),
    "-c",
    String(CEILING_CLIENTS),
    "-r",
    "100000",
    "EVALSHA",
    sha,
    String(keys.length),
    ...keys,
    ...call.args,
  ];
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const code = await withTimeout(new Promise<number | null>((r) => child.once("exit", r)), 30_000, "redis-benchmark").catch((err) => {
    child.kill("SIGKILL");
    throw err;
  });
  // -q prints progress with \r and ends with "<command>: N requests per second, p50=X msec".
  const last = out
    .split(/[\r\n]/)
    .filter((l) => /requests per second/.test(l))
    .pop();
  const rps = last && /([\d.]+) requests per second/.exec(last)?.[1];
  if (code !== 0 || !rps) return { ok: false, reason: `redis-benchmark exited ${code}: ${out.trim().slice(-300)}` };
  const shown = `redis-benchmark ${args.map((a) => (a === sha ? "<sha of mutex_acquire>" : a)).join(" ")}`;
  return { ok: true, rps: Number(rps), p50: /p50=([\d.]+ \w+)/.exec(last!)?.[1], command: shown };
}
