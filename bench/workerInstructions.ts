/**
 * Table 1d: workerd's instructions per request for the uncontended cycle
 * through the holdfast Worker, over the floor Worker's (bench/cycleFloorWorker:
 * the same store round trips, no holdfast code), counted by callgrind. CPU
 * time per request moves 1-8 % between two servings of the same code on
 * these machines; an instruction count does not move with load (issue 46).
 *
 * Each Worker is served by its own workerd under `valgrind --tool=callgrind`
 * (tools/serve-worker's `wrap`). Per store and side: a warm-up (isolates,
 * objects, scripts, the JIT), then per round the counters are zeroed
 * (`callgrind_control -z`), CYCLES acquire + release run one after another,
 * and the counters are dumped (`-d`): instructions per request = the dump's
 * total / (2 x CYCLES). What is counted is all of workerd's user-space work
 * for the requests, every thread (the Durable Object runs in the same
 * process); the gateway and redis-server are other processes, not counted.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startWorkerServer } from "../tools/serve-worker/serve.mjs";
import { recordFigure } from "./baseline";
import { WorkerApi } from "./clients";
import { CYCLE_FLOOR_TARGET, workerdPid } from "./cycleFloor";
import { withTimeout } from "./loop";
import { type Gateway, ROOT } from "./stack";
import { ratio } from "./stats";
import { printTable } from "./table";

const run = promisify(execFile);

/** A workerd under callgrind: where it serves, its key, its pid, and where its dumps go. */
interface CountedServer {
  url: string;
  apiKey: string;
  pid: number;
  dumps: string;
  stop(): Promise<void>;
}

async function serveCounted(label: string, vars: Record<string, string>, projectDir?: string): Promise<CountedServer> {
  const dumps = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-workerd-cg-"));
  // --smc-check: V8 writes the code it runs (its JIT) outside the stack; callgrind must see the rewrites.
  // -q: valgrind says nothing but errors (its banner and totals would land in the bench's output).
  const wrap = ["valgrind", "-q", "--tool=callgrind", "--smc-check=all-non-file", `--callgrind-out-file=${path.join(dumps, "cg.out")}`];
  // V8 single-threaded: its compiler and GC threads would count at their own pace; in the request's thread they count alike.
  const served = await withTimeout(
    startWorkerServer({ vars, projectDir, wrap, v8Flags: ["--single-threaded"] }),
    300_000,
    `serving ${label} under callgrind`,
  );
  return {
    url: served.url,
    apiKey: vars.API_KEYS?.split("=")[1] ?? "the-floor-has-no-keys",
    pid: workerdPid(served.url),
    dumps,
    stop: async () => {
      await served.stop();
      fs.rmSync(dumps, { recursive: true, force: true });
    },
  };
}

/** The total instructions of the newest dump in `dir` (its `summary:` or `totals:` line). */
function newestDumpTotal(dir: string, before: Set<string>): number {
  const fresh = fs.readdirSync(dir).filter((f) => f.startsWith("cg.out") && !before.has(f));
  if (fresh.length !== 1) throw new Error(`callgrind wrote ${fresh.length} dumps for one dump command in ${dir}`);
  const text = fs.readFileSync(path.join(dir, fresh[0]), "utf8");
  const m = /^(?:summary|totals):\s+(\d+)/m.exec(text);
  if (!m) throw new Error(`no instruction total in ${fresh[0]}`);
  return Number(m[1]);
}

async function cycles(api: WorkerApi, name: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const release = await api.acquire(name);
    if (!release) throw new Error(`${api.base}: an uncontended acquire of ${name} was refused`);
    await release();
  }
}

/** Instructions per request, one figure per round. */
async function perRequest(s: CountedServer, base: string, name: string, n: number, rounds: number): Promise<number[]> {
  const api = new WorkerApi(base, s.apiKey);
  await cycles(api, `${name}-warm`, WARM_UP);
  const out: number[] = [];
  for (let r = 0; r < rounds; r++) {
    await run("callgrind_control", ["-z", String(s.pid)]);
    await cycles(api, name, n);
    const before = new Set(fs.readdirSync(s.dumps));
    await run("callgrind_control", ["-d", String(s.pid)]);
    out.push(newestDumpTotal(s.dumps, before) / (2 * n));
  }
  return out;
}

/** Cycles before counting: isolates, objects, scripts and the JIT settle (fewer left rounds 10 % apart). */
const WARM_UP = 400;

const thousands = (n: number) => `${(n / 1000).toFixed(1)}k`;
const spread = (xs: number[]) => `${thousands(Math.min(...xs))} / ${thousands(Math.max(...xs))}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Table 1d, for `npm run bench` (section 1, or alone: BENCH_ONLY=1d). */
export async function workerInstructionsSection(
  gw: Gateway,
  vars: { redis: Record<string, string>; durable: Record<string, string> },
  run_: string,
  quick: boolean,
) {
  try {
    await run("valgrind", ["--version"]);
    await run("callgrind_control", ["--version"]);
  } catch {
    printTable("1d. Worker instructions per request over its floor", ["store"], [], ["not measured: valgrind (callgrind) is not installed"]);
    return;
  }
  const n = quick ? 60 : 250;
  const rounds = quick ? 2 : 3;
  const started: CountedServer[] = [];
  const rows: string[][] = [];
  try {
    const floor = await serveCounted("the floor Worker", { GATEWAY_URL: gw.url, GATEWAY_TOKEN: gw.token }, path.join(ROOT, "bench/cycleFloorWorker"));
    started.push(floor);
    for (const [store, storeVars, floorPath] of [
      ["Durable", vars.durable, "do"],
      ["Redis", vars.redis, "redis"],
    ] as const) {
      const worker = await serveCounted(`the Worker (${store} store)`, storeVars);
      started.push(worker);
      const w = await perRequest(worker, worker.url, `${run_}-i${store}`, n, rounds);
      const f = await perRequest(floor, `${floor.url}/${floorPath}`, `${run_}-i${store}`, n, rounds);
      const x = median(w) / median(f);
      recordFigure({ name: `1d. ${store} store workerd instructions per request / floor`, value: x, unit: "x", better: "lower", noise: 0.05 });
      rows.push([store, thousands(median(w)), spread(w), thousands(median(f)), spread(f), `${ratio(x)}x`]);
      await worker.stop();
      started.pop();
    }
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
  printTable(
    "1d. Worker instructions per request over its floor (callgrind on workerd)",
    ["store", "Worker instr/req (median)", "min / max of rounds", "floor instr/req (median)", "min / max of rounds", "x floor"],
    rows,
    [
      `acquire (try once) + release, one at a time, ${rounds} rounds of ${n} cycles after ${WARM_UP} warm-up cycles; each Worker in its own workerd under`,
      "valgrind --tool=callgrind, V8 --single-threaded; instructions = every thread of that workerd between zeroing and dumping the counters, / requests (2 per",
      "cycle); the Durable Object runs in the same workerd, the gateway and redis-server do not. floor: bench/cycleFloorWorker.",
      `target: <= ${CYCLE_FLOOR_TARGET}x (issue 46); an instruction count does not move with the machine's load, so judge by it, not by CPU time.`,
    ],
  );
}
