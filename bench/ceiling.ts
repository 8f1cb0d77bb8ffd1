/**
 * The ceiling: raw EVALSHA throughput of the bench's redis-server for
 * lua/mutex_acquire.lua, measured with redis-benchmark (no HTTP, no gateway,
 * pipelined over 50 connections). Skipped, with the reason, when
 * redis-benchmark is not installed.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { FENCE_KEEP_MS, REQUEST_MEMORY_MS } from "../src/limits";
import { TTL_MS } from "./clients";
import { withTimeout } from "./loop";
import { gatewayCommand } from "./redisInfo";
import { type Gateway, ROOT } from "./stack";

const INSTALL = "sudo apt-get install -y redis-tools";
export const CEILING_REQUESTS = 50_000;
export const CEILING_CLIENTS = 50;

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

export async function measureCeiling(gw: Gateway): Promise<Ceiling> {
  const bin = findRedisBenchmark();
  if (!bin) return { ok: false, reason: `redis-benchmark not found on PATH or in /usr/bin (install it with: ${INSTALL})` };
  const source = fs.readFileSync(path.join(ROOT, "lua/mutex_acquire.lua"), "utf8");
  const sha = String(await gatewayCommand(gw, ["SCRIPT", "LOAD", source]));
  const base = "hf:{mx:bench:ceiling-__rand_int__}";
  const args = [
    "-p", String(gw.redisPort), "-q", "-n", String(CEILING_REQUESTS), "-c", String(CEILING_CLIENTS), "-r", "100000",
    "EVALSHA", sha, "3", base, `${base}:fence`, `${base}:rq:__rand_int__`,
    "bench-token", String(TTL_MS), "new", "0", String(FENCE_KEEP_MS), String(REQUEST_MEMORY_MS),
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
  const last = out.split(/[\r\n]/).filter((l) => /requests per second/.test(l)).pop();
  const rps = last && /([\d.]+) requests per second/.exec(last)?.[1];
  if (code !== 0 || !rps) return { ok: false, reason: `redis-benchmark exited ${code}: ${out.trim().slice(-300)}` };
  const shown = `redis-benchmark ${args.map((a) => (a === sha ? "<sha of lua/mutex_acquire.lua>" : a)).join(" ")}`;
  return { ok: true, rps: Number(rps), p50: /p50=([\d.]+ \w+)/.exec(last!)?.[1], command: shown };
}
