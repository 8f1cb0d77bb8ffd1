/**
 * `npx tsx bench/cycleAB.ts <tree A> <tree B> [rounds]`: table 1c's cycle
 * (acquire + release, one at a time) through the holdfast Worker built from
 * tree B against the one built from tree A, same run, alternating rounds
 * (issue 38: the ratio to the floor moves +-5 % between runs, so a change is
 * judged against the tree without it in one run). A tree is a checkout with
 * its generated files, e.g.
 *
 *   git archive HEAD | tar -x -C /tmp/a && ln -s $PWD/node_modules /tmp/a/ && (cd /tmp/a && node tools/generate.mjs)
 *
 * A third Worker, a second serving of tree A, gives the run's own noise
 * floor (A' / A): two workerd processes of the same code differed by 1-8 %
 * in CPU per request here (2 cores, other work beside), so a B / A inside
 * that band is no gain; swapping the trees (B as A) is a second check.
 * STORES=redis,durable (default both).
 */
import { randomBytes } from "node:crypto";
import { startWorkerServer } from "../tools/serve-worker/serve.mjs";
import { WorkerApi } from "./clients";
import { type CycleServer, measureCycleOverFloor, overFloor, workerdPid } from "./cycleFloor";
import { startLocalStackProcess } from "./stack";
import { ms, percentile, ratio } from "./stats";
import { printTable } from "./table";

const [treeA, treeB] = process.argv.slice(2, 4);
if (!treeA || !treeB) throw new Error("usage: npx tsx bench/cycleAB.ts <tree A> <tree B> [rounds]");
const rounds = Number(process.argv[4] ?? 20);
const stores = (process.env.STORES ?? "redis,durable").split(",") as Array<"redis" | "durable">;

const stack = await startLocalStackProcess();
const stops: Array<() => Promise<void>> = [stack.stop];
const rows: string[][] = [];
try {
  const apiKey = randomBytes(16).toString("hex");
  for (const store of stores) {
    const vars: Record<string, string> = { API_KEYS: `bench=${apiKey}` };
    if (store === "redis") Object.assign(vars, { UPSTASH_REDIS_REST_URL: stack.gateway.url, UPSTASH_REDIS_REST_TOKEN: stack.gateway.token });
    const serve = async (projectDir: string): Promise<CycleServer> => {
      const server = await startWorkerServer({ vars, projectDir });
      stops.push(server.stop);
      return { api: new WorkerApi(server.url, apiKey), pid: workerdPid(server.url) };
    };
    const [a, b, again] = [await serve(treeA), await serve(treeB), await serve(treeA)];
    const label = store === "redis" ? "Redis" : "Durable";
    for (const [name, side] of [
      ["B / A", b],
      ["A' / A", again],
    ] as const) {
      const row = await measureCycleOverFloor(label, side, a, { rounds, cycles: 50, prefix: `ab${Date.now()}` });
      const x = overFloor(row);
      rows.push([
        label,
        name,
        ms(percentile(row.worker, 50)),
        ms(percentile(row.floor, 50)),
        `${ratio(x.wall)}x`,
        row.workerCpuUs.toFixed(0),
        row.floorCpuUs.toFixed(0),
        `${ratio(x.cpu)}x`,
      ]);
    }
  }
} finally {
  for (const stop of stops.reverse()) await stop().catch((err) => console.error(`cycleAB: stopping: ${err.message}`));
}
printTable(
  "The uncontended cycle, tree B against tree A (same run, alternating rounds)",
  ["store", "pair", "p50 ms", "A p50 ms", "x A", "CPU µs/req", "A CPU µs/req", "x A"],
  rows,
  [`A = ${treeA}, B = ${treeB}; ${rounds} rounds of 50 cycles per pair; CPU as in table 1c (workerd's threads, /proc schedstat).`],
);
