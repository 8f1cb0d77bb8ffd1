/**
 * `npm run bench:cycles [rounds] [cycles]`: where an uncontended
 * acquire+release cycle spends its time, the library next to @upstash/lock,
 * on one local stack. Rounds alternate the two clients (so drift on a busy
 * machine hits both alike) and report per cycle: wall time, CPU of this
 * process (the client), of the gateway process and of redis-server, Redis's
 * own time inside the commands (INFO commandstats; a script's inner commands
 * count twice, in the script and on their own), and HTTP requests to the
 * gateway. A tool for finding cost, not a test; compare figures only within
 * one run.
 */
import fs from "node:fs";
import { upstashRedis } from "./clients";
import { gatewayCommand } from "./redisInfo";
import { installFetchCounter, requestsTo } from "./roundTrips";
import { type Gateway, startLocalStackProcess } from "./stack";
import { directCycleTargets } from "./uncontended";

const ROUNDS = Number(process.argv[2] ?? 3);
const CYCLES = Number(process.argv[3] ?? 1500);
/** CYCLE_ONLY="holdfast Mutex (library):16" measures one client at one loop count (for a CPU profile). */
const ONLY = process.env.CYCLE_ONLY;

/** CPU seconds a process has used (utime + stime), from /proc. */
function procCpu(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks, USER_HZ 100
}

async function redisUsec(gw: Gateway): Promise<number> {
  const text = String(await gatewayCommand(gw, ["INFO", "commandstats"]));
  let total = 0;
  for (const m of text.matchAll(/^cmdstat_[a-z_|]+:calls=\d+,usec=(\d+)/gm)) total += Number(m[1]);
  return total;
}

async function main() {
  const stack = await startLocalStackProcess();
  try {
    const gw = stack.gateway;
    installFetchCounter();
    const redisPid = Number(String(await gatewayCommand(gw, ["INFO", "server"])).match(/^process_id:(\d+)/m)?.[1]);
    const redis = upstashRedis(gw);
    console.log(`cycle cost: ${ROUNDS} rounds x ${CYCLES} cycles per client and loop count (try once, ttl 10 s, release)`);
    const results: Record<string, Record<number, number[][]>> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const loops of [1, 16]) {
        for (const { label, acquirer } of directCycleTargets(gw, redis)) {
          if (ONLY && ONLY !== `${label}:${loops}`) continue;
          const acquires = Array.from({ length: loops }, (_, i) => acquirer(`cc-${round}-${loops}-${label.length}-${i}`));
          // warm-up
          for (const a of acquires) await (await a())?.();
          const [c0, g0, r0, u0, h0] = [process.cpuUsage(), procCpu(stack.pid), procCpu(redisPid), await redisUsec(gw), requestsTo(gw.url)];
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
          const c = process.cpuUsage(c0);
          const row = [
            (done / wall) * 1000,
            (c.user + c.system) / done,
            ((procCpu(stack.pid) - g0) * 1e6) / done,
            ((procCpu(redisPid) - r0) * 1e6) / done,
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
    console.log("client                   loops  cycles/s  client CPU µs  gateway CPU µs  redis CPU µs  cmdstat µs   HTTP   (medians per cycle)");
    for (const [label, byLoops] of Object.entries(results)) {
      for (const [loops, rows] of Object.entries(byLoops)) {
        const col = (i: number) => med(rows.map((r) => r[i]));
        console.log(
          `${label.padEnd(24)} ${loops.padStart(5)} ${col(0).toFixed(0).padStart(9)} ${col(1).toFixed(0).padStart(14)} ${col(2).toFixed(0).padStart(15)} ${col(3).toFixed(0).padStart(13)} ${col(4).toFixed(1).padStart(13)} ${col(5).toFixed(2).padStart(5)}`,
        );
      }
    }
  } finally {
    await stack.stop();
  }
}

await main();
