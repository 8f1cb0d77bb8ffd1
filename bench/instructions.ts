/**
 * Redis instructions per uncontended acquire+release, counted by callgrind:
 * a figure that does not move with the machine's load, so a script change is
 * judged by a number rather than by noisy wall-clock rates.
 *
 * redis-server runs under `valgrind --tool=callgrind` (server cron at 1 Hz),
 * behind the project's gateway with the key-rule check off (its ACL command
 * is a test instrument, not part of a cycle on Upstash). Each client warms
 * up (scripts loaded, code paths taken), then its counters are zeroed
 * (`callgrind_control -z`), it runs CYCLES try-lock+release cycles one after
 * another, and the counters are dumped (`-d`): instructions per cycle = the
 * dump's total / CYCLES. What it counts is all of redis-server's work for the
 * cycle: reading the gateway's commands, the scripts or commands, replies.
 */
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Redis } from "@upstash/redis";
import { startGateway } from "../tools/upstash-gateway/server.mjs";
import { instructionSteps } from "./instructionSteps";
import { directCycleTargets } from "./uncontended";

const run = promisify(execFile);

export interface InstructionsRow {
  label: string;
  /** Instructions per acquire+release, one figure per round. */
  perCycle: number[];
}

/** Instructions per call of one script (instructionSteps.ts), one figure per round. */
export interface StepRow {
  label: string;
  floor?: string;
  perCall: number[];
}

export type InstructionsResult =
  | { ok: true; cycles: number; rows: InstructionsRow[]; steps: StepRow[]; valgrind: string }
  | { ok: false; reason: string };

/** `steps`: also count each script alone (instructionSteps.ts), `cycles` calls each per round. */
export async function measureInstructions(
  cycles = 1000,
  rounds = 2,
  { steps = false, only }: { steps?: boolean; only?: RegExp } = {},
): Promise<InstructionsResult> {
  let valgrind: string;
  try {
    valgrind = (await run("valgrind", ["--version"])).stdout.trim();
    await run("callgrind_control", ["--version"]);
  } catch {
    return { ok: false, reason: "valgrind (callgrind) is not installed" };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-callgrind-"));
  const port = await freePort();
  const server = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      `--callgrind-out-file=${path.join(dir, "cg.out")}`,
      "redis-server",
      "--port",
      String(port),
      "--save",
      "",
      "--appendonly",
      "no",
      "--hz",
      "1",
      "--loglevel",
      "warning",
    ],
    { stdio: "ignore" },
  );
  const token = "instructions";
  let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
  try {
    await waitForRedis(port, 60_000);
    await padKeyspace(port);
    gateway = await startGateway({ redisPort: port, token, keyRule: "off" });
    const redis = new Redis({ url: gateway.url, token, enableTelemetry: false });
    // With `only`, just the script calls it names (a script change judged in seconds, not minutes).
    const targets = only ? [] : directCycleTargets({ url: gateway.url, token, redisPort: port }, redis);
    const rows: InstructionsRow[] = targets.map((t) => ({ label: t.label, perCycle: [] }));
    let dumps = 0;
    /** Instructions Redis spent on what `counted` sends (the counters zeroed before, dumped after). */
    const count = async (counted: () => Promise<void>) => {
      await run("callgrind_control", ["-z", String(server.pid)]);
      await counted();
      await run("callgrind_control", ["-d", String(server.pid)]);
      dumps++;
      return totalOf(path.join(dir, `cg.out.${dumps}`));
    };
    for (let round = 0; round < rounds; round++) {
      for (const [i, target] of (round % 2 === 0 ? targets : [...targets].reverse()).entries()) {
        const acquire = target.acquirer(`instructions-${round}-${i}-${target.label.length}`);
        for (let w = 0; w < 20; w++) await (await acquire())?.();
        const total = await count(async () => {
          for (let c = 0; c < cycles; c++) {
            const release = await acquire();
            if (!release) throw new Error(`${target.label}: an uncontended try-lock was refused`);
            await release();
          }
        });
        rows.find((r) => r.label === target.label)?.perCycle.push(total / cycles);
      }
    }
    const stepRows: StepRow[] = [];
    for (let round = 0; steps && round < rounds; round++) {
      for (const step of (await instructionSteps(redis, `instructions-steps-${round}`)).filter((s) => !only || only.test(s.label))) {
        // Warm: the step's scripts loaded and its code paths taken, on names of their own.
        for (let w = cycles; w < cycles + 20; w++) {
          await step.setup(w);
          await step.run(w);
        }
        for (let i = 0; i < cycles; i++) await step.setup(i);
        const total = await count(async () => {
          for (let i = 0; i < cycles; i++) await step.run(i);
        });
        const row =
          stepRows.find((r) => r.label === step.label) ?? stepRows[stepRows.push({ label: step.label, floor: step.floor, perCall: [] }) - 1];
        row.perCall.push(total / cycles);
      }
    }
    return { ok: true, cycles, rows, steps: stepRows, valgrind };
  } finally {
    await gateway?.close();
    server.kill("SIGTERM");
    await new Promise((resolve) => (server.exitCode !== null ? resolve(undefined) : server.once("exit", resolve)));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Fills the keyspace with PAD_KEYS keys that expire in a day, so neither of
 * Redis's dictionaries (keys, expiries) grows past its size while counting:
 * a dictionary that doubles rehashes a bucket on each command that follows,
 * and those steps, a few thousand instructions each, fell on whichever row was
 * running (rows of one script differed by 10 % with their order). The rows
 * add about 30,000 keys; 2^17 buckets hold them with the pad.
 */
const PAD_KEYS = 80_000;
async function padKeyspace(port: number): Promise<void> {
  const script = `for i = 1, ${PAD_KEYS} do redis.call('SET', 'bench-pad:' .. i, '1', 'EX', '86400') end return 1`;
  await new Promise<void>((resolve, reject) => {
    const s = net.createConnection({ port, host: "127.0.0.1" });
    s.once("connect", () => s.write(`*3\r\n$4\r\nEVAL\r\n$${Buffer.byteLength(script)}\r\n${script}\r\n$1\r\n0\r\n`));
    s.once("data", (d) => {
      s.destroy();
      if (d.toString().startsWith(":1")) resolve();
      else reject(new Error(`padding the keyspace: ${d.toString().trim()}`));
    });
    s.once("error", reject);
  });
}

/** The instructions a callgrind dump counted ("summary:" or "totals:" line). */
function totalOf(file: string): number {
  const text = fs.readFileSync(file, "utf8");
  const m = /^(?:summary|totals): (\d+)/m.exec(text);
  if (!m) throw new Error(`no totals in ${file}`);
  return Number(m[1]);
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Until redis-server (slow to start under valgrind) answers PING. */
async function waitForRedis(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const answered = await new Promise<boolean>((resolve) => {
      const s = net.createConnection({ port, host: "127.0.0.1" });
      s.setTimeout(1000);
      s.once("data", (d) => {
        s.destroy();
        resolve(d.toString().startsWith("+PONG"));
      });
      s.once("connect", () => s.write("PING\r\n"));
      s.once("error", () => resolve(false));
      s.once("timeout", () => {
        s.destroy();
        resolve(false);
      });
    });
    if (answered) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`redis-server under valgrind did not answer on port ${port} within ${timeoutMs} ms`);
}

/** Rows for the bench table: instructions per cycle (k), and the ratio to the first row. */
export function instructionsTableRows(result: Extract<InstructionsResult, { ok: true }>): string[][] {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const base = mean(result.rows[result.rows.length - 1].perCycle);
  return result.rows.map((r) => [
    r.label,
    `${(mean(r.perCycle) / 1000).toFixed(1)}k`,
    r.perCycle.map((x) => `${(x / 1000).toFixed(1)}k`).join(" / "),
    `${(mean(r.perCycle) / base).toFixed(2)}x`,
  ]);
}

export const INSTRUCTIONS_HEADER = ["client", "Redis instructions per cycle", "per round", "vs @upstash/lock"];

/** Rows for the per-script table: instructions per call (k), and the ratio to its floor row where it has one. */
export function stepTableRows(steps: StepRow[]): string[][] {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return steps.map((r) => {
    const floor = steps.find((f) => f.label === r.floor);
    return [r.label, `${(mean(r.perCall) / 1000).toFixed(1)}k`, floor ? `${(mean(r.perCall) / mean(floor.perCall)).toFixed(2)}x` : ""];
  });
}

export const STEP_HEADER = ["script call", "Redis instructions per call", "vs its floor"];

// `npm run bench:instructions [cycles] [pattern]`: with a pattern (a regular expression), only the script calls whose label it matches.
if (import.meta.url === `file://${process.argv[1]}`) {
  const cycles = Number(process.argv[2] ?? 1000);
  const only = process.argv[3] ? new RegExp(process.argv[3]) : undefined;
  const result = await measureInstructions(cycles, 2, { steps: true, only });
  if (!result.ok) {
    console.error(`bench:instructions: ${result.reason}`);
    process.exit(1);
  }
  const { printTable } = await import("./table");
  if (result.rows.length)
    printTable(`Redis instructions per acquire+release (callgrind, ${cycles} cycles per round)`, INSTRUCTIONS_HEADER, instructionsTableRows(result), [
      `${result.valgrind}; redis-server at 1 Hz cron behind the gateway (key-rule check off); deterministic to within ~2 %.`,
    ]);
  printTable(
    `Redis instructions per script call (callgrind, ${cycles} calls per round, mean of 2 rounds)`,
    STEP_HEADER,
    stepTableRows(result.steps),
    [
      "Each call on a name of its own, set up uncounted (bench/instructionSteps.ts); the floors send the same commands with the",
      "same keys and arguments as the library's mutex, with no checks and no other logic.",
    ],
  );
}
