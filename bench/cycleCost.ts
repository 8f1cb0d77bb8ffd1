/**
 * `npm run bench:cycles [rounds] [cycles]`: where an uncontended
 * acquire+release cycle spends its time, the library next to @upstash/lock,
 * on one local stack. Rounds alternate the clients (so drift on a busy
 * machine hits them alike) and report per cycle: wall time, CPU of this
 * process (the client), of the gateway process and of redis-server, Redis's
 * own time inside the commands (INFO commandstats; a script's inner commands
 * count twice, in the script and on their own), and HTTP requests to the
 * gateway. A tool for finding cost, not a test; compare figures only within
 * one run.
 *
 * Two rows split the library's cost without it: "holdfast scripts" sends the
 * library's own EVALSHAs (same keys and arguments) through the same
 * @upstash/redis client with no library code around them, and "canned
 * scripts" sends requests of the same shape to scripts that only answer a
 * reply of the same shape. So library - holdfast scripts = the library's
 * JavaScript; holdfast scripts - canned scripts = the scripts' work in Redis
 * (and what waiting for it costs the other processes); canned scripts -
 * @upstash/lock = the requests' size and shape.
 *
 * With 16 loops @upstash/redis batches the loops' calls into pipelines
 * (HTTP 0.13 per cycle) and the loops move nearly in step, so client,
 * gateway and redis-server mostly take turns on a batch: the rate follows
 * the three event loops' CPU per cycle ("main": the client's and the
 * gateway's main thread, and "main sum" with redis-server's; the process
 * columns also hold V8's helper threads - garbage collection, compilation -
 * which run beside the main thread).
 */
import fs from "node:fs";
import type { Redis } from "@upstash/redis";
import { mutexKeys } from "../src/kinds/mutex/keys";
import { luaScriptSha1 } from "../src/store/redis/scripts.generated";
import { newOwnerToken, newRequestId } from "../src/tokens";
import { NAMESPACE, TTL_MS, upstashRedis } from "./clients";
import { cpuSeconds } from "./cycleFloor";
import { gatewayCommand } from "./redisInfo";
import { installFetchCounter, requestsTo } from "./roundTrips";
import { type Gateway, startLocalStackProcess } from "./stack";
import { type CycleTarget, directCycleTargets, directLabels } from "./uncontended";

const ROUNDS = Number(process.argv[2] ?? 3);
const CYCLES = Number(process.argv[3] ?? 1500);
/** CYCLE_ONLY="holdfast Mutex (library):16" measures one client at one loop count (for a CPU profile). */
const ONLY = process.env.CYCLE_ONLY;

const labels = { scripts: "holdfast scripts", canned: "canned scripts" } as const;

/**
 * CPU seconds one thread has used: its time on a CPU (/proc/<pid>/task/<tid>/schedstat, in ns), else
 * utime + stime (10 ms ticks: coarse against a round of 16 loops).
 */
function threadCpu(pid: number, tid: number): number {
  const file = `/proc/${pid}/task/${tid}/schedstat`;
  if (fs.existsSync(file)) return Number(fs.readFileSync(file, "utf8").split(" ")[0]) / 1e9;
  const fields = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks, USER_HZ 100
}

async function redisUsec(gw: Gateway): Promise<number> {
  const text = String(await gatewayCommand(gw, ["INFO", "commandstats"]));
  let total = 0;
  for (const m of text.matchAll(/^cmdstat_[a-z_|]+:calls=\d+,usec=(\d+)/gm)) total += Number(m[1]);
  return total;
}

/**
 * The library's usual cycle as it reaches Redis (src/kinds/mutex/redisMutex.ts: a try-lock passes its
 * token and ttl, ScriptRunner the caller's clock; the library's release is release_unwatched), sent
 * through `redis` with the given digests and nothing else around it.
 */
function scriptCycleTarget(label: string, redis: Redis, acquireSha: string, releaseSha: string): Omit<CycleTarget, "origin"> {
  return {
    label,
    direct: true,
    usesRedis: true,
    acquirer: (name) => {
      const lock = mutexKeys.lock({ ns: NAMESPACE, name });
      const acquireKeys = [lock, mutexKeys.legacyFence(lock)];
      return async () => {
        const token = newOwnerToken();
        const granted = (await redis.evalsha(acquireSha, acquireKeys, [token, String(TTL_MS), String(Date.now() * 1000)])) as string[];
        if (granted[1] !== "granted") return null;
        return async () => {
          const released = (await redis.evalsha(releaseSha, [lock, mutexKeys.request(lock, newRequestId())], [token])) as string[];
          if (released[1] !== "ok") throw new Error(`${label}: release answered ${JSON.stringify(released)}`);
        };
      };
    },
  };
}

/**
 * Scripts with the library's key-locking flag that do no Redis work and answer what the library's
 * usual acquire and release answer (the same fields, the fence as long as a real one).
 */
async function loadCannedScripts(gw: Gateway): Promise<{ acquireSha: string; releaseSha: string }> {
  const flag = "#!lua flags=allow-key-locking\n";
  const acquire = `${flag}return '["status","granted","fence","' .. ARGV[3] .. '","ttlMs","' .. ARGV[2] .. '","expiresAt","1764131121000","count","1"]'`;
  const release = `${flag}return '["status","ok","released","1","count","0","fence","1764131111000123","watched","0"]'`;
  return {
    acquireSha: String(await gatewayCommand(gw, ["SCRIPT", "LOAD", acquire])),
    releaseSha: String(await gatewayCommand(gw, ["SCRIPT", "LOAD", release])),
  };
}

async function main() {
  const stack = await startLocalStackProcess();
  try {
    const gw = stack.gateway;
    installFetchCounter();
    const redisPid = Number(String(await gatewayCommand(gw, ["INFO", "server"])).match(/^process_id:(\d+)/m)?.[1]);
    const redis = upstashRedis(gw);
    const canned = await loadCannedScripts(gw);
    const [library, upstashLock] = directCycleTargets(gw, redis);
    const targets: CycleTarget[] = [
      library,
      { origin: gw.url, ...scriptCycleTarget(labels.scripts, redis, luaScriptSha1.mutex_acquire, luaScriptSha1.mutex_release_unwatched) },
      { origin: gw.url, ...scriptCycleTarget(labels.canned, redis, canned.acquireSha, canned.releaseSha) },
      upstashLock,
    ];
    // The library loads its scripts on first use (EVALSHA, EVAL on NOSCRIPT); the script rows only EVALSHA.
    const loaded = await library.acquirer("cc-load")();
    await loaded?.();
    console.log(`cycle cost: ${ROUNDS} rounds x ${CYCLES} cycles per client and loop count (try once, ttl 10 s, release)`);
    const results: Record<string, Record<number, number[][]>> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const loops of [1, 16]) {
        // Each round starts with another client, so none is always the one measured after a given other.
        const turn = round % targets.length;
        for (const { label, acquirer } of [...targets.slice(turn), ...targets.slice(0, turn)]) {
          if (ONLY && ONLY !== `${label}:${loops}`) continue;
          const acquires = Array.from({ length: loops }, (_, i) => acquirer(`cc-${round}-${loops}-${label.length}-${i}`));
          // warm-up
          for (const a of acquires) await (await a())?.();
          const before = [
            process.cpuUsage(),
            threadCpu(process.pid, process.pid),
            cpuSeconds(stack.pid),
            threadCpu(stack.pid, stack.pid),
            cpuSeconds(redisPid),
            await redisUsec(gw),
            requestsTo(gw.url),
          ] as const;
          const t0 = performance.now();
          let done = 0;
          await Promise.all(
            acquires.map(async (acquire) => {
              while (done < CYCLES) {
                done++;
                const release = await acquire();
                if (!release) throw new Error(`${label}: an uncontended acquire was refused`);
                await release();
              }
            }),
          );
          const wall = performance.now() - t0;
          const [c0, cm0, g0, gm0, r0, u0, h0] = before;
          const c = process.cpuUsage(c0);
          const perCycleUs = (seconds: number) => (seconds * 1e6) / done;
          const row = [
            (done / wall) * 1000,
            (c.user + c.system) / done,
            perCycleUs(threadCpu(process.pid, process.pid) - cm0),
            perCycleUs(cpuSeconds(stack.pid) - g0),
            perCycleUs(threadCpu(stack.pid, stack.pid) - gm0),
            perCycleUs(cpuSeconds(redisPid) - r0),
            ((await redisUsec(gw)) - u0) / done,
            (requestsTo(gw.url) - h0) / done,
          ];
          const byLoops = results[label] ?? {};
          results[label] = byLoops;
          byLoops[loops] = [...(byLoops[loops] ?? []), row];
        }
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const cols = (label: string, loops: number) => (i: number) => med(results[label]?.[loops]?.map((r) => r[i]) ?? [Number.NaN]);
    console.log("CPU µs per cycle (medians)                     client          gateway");
    console.log("client                   loops  cycles/s   process  main   process  main   redis  cmdstat µs  HTTP  main sum");
    for (const target of targets) {
      for (const loops of [1, 16]) {
        if (!results[target.label]?.[loops]) continue;
        const col = cols(target.label, loops);
        const n = (i: number, w: number, d = 0) => col(i).toFixed(d).padStart(w);
        console.log(
          `${target.label.padEnd(24)} ${String(loops).padStart(5)} ${n(0, 9)} ${n(1, 9)} ${n(2, 5)} ${n(3, 9)} ${n(4, 5)} ${n(5, 7)} ${n(6, 11, 1)} ${n(7, 5, 2)} ${(col(2) + col(4) + col(5)).toFixed(0).padStart(9)}`,
        );
      }
    }
    // Ratios only where both rows ran (CYCLE_ONLY runs one).
    const ratio = (label: string, loops: number) => (cols(label, loops)(0) / cols(directLabels.upstashLock, loops)(0)).toFixed(2);
    for (const label of [directLabels.library, labels.scripts, labels.canned]) {
      if (results[label] && results[directLabels.upstashLock])
        console.log(`${label} / @upstash/lock cycles/s: sequential ${ratio(label, 1)}x, 16 loops ${ratio(label, 16)}x`);
    }
  } finally {
    await stack.stop();
  }
}

await main();
