#!/usr/bin/env node
// `npm run ci:busy`: the whole CI (.ci/run) with every core kept busy by
// other processes, as on a small shared CI runner or a laptop doing other
// work. One busy-loop process per core runs beside it at normal priority, so
// CI gets about half the CPU it would alone; a suite that passes here has no
// budget that only a quiet machine meets. The busy processes are stopped when
// CI ends, whatever the exit (pass, fail, Ctrl-C, a crash of this script), and
// each also stops by itself if this script dies without stopping it.
//
// Prints CI's result, its wall time and how much CPU the busy processes took
// (the proof that the cores were in fact contended), and exits with CI's status.
//
//   npm run ci:busy            one busy process per core
//   npm run ci:busy -- 3       three busy processes
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const cores = os.availableParallelism();
const count = process.argv[2] === undefined ? cores : Number(process.argv[2]);
if (!Number.isSafeInteger(count) || count < 0) {
  console.error(`ci:busy: the number of busy processes is a whole number (default: ${cores}, one per core), not ${process.argv[2]}`);
  process.exit(2);
}

// Spins, and every few million steps checks that its parent is still this script: reparented
// (this script was killed without its exit handler), it exits. A busy loop runs no timers, so
// the check is in the loop itself.
const BUSY = "const parent = process.ppid; for (;;) { for (let i = 0; i < 5e6; i++); if (process.ppid !== parent) process.exit(0); }";

const busy = Array.from({ length: count }, () => spawn(process.execPath, ["-e", BUSY], { stdio: "ignore" }));
let ci;

/** CPU seconds a process has used so far (user + system), from /proc; undefined off Linux or once it is gone. */
function cpuSeconds(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after "pid (comm) ".
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

function stopBusy() {
  for (const b of busy) if (b.exitCode === null && b.signalCode === null) b.kill("SIGKILL");
}
// Whatever ends this script ends the busy processes with it.
process.on("exit", stopBusy);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    // CI gets the signal too (Ctrl-C reaches the whole process group; a kill of this script is passed on).
    ci?.kill(signal);
    stopBusy();
    process.exitCode = 130;
  });
}

const minutes = (s) => `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
const startedAt = process.hrtime.bigint();
console.log(`ci:busy: .ci/run with ${count} busy process${count === 1 ? "" : "es"} at normal priority on ${cores} core${cores === 1 ? "" : "s"}`);
ci = spawn("bash", [path.join(ROOT, ".ci/run")], { cwd: ROOT, stdio: "inherit" });
ci.on("error", (err) => {
  console.error(`ci:busy: could not start .ci/run: ${err.message}`);
  process.exit(1);
});
ci.on("exit", (code, signal) => {
  const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
  const used = busy.map((b) => cpuSeconds(b.pid));
  stopBusy();
  const busyCpu = used.every((s) => s !== undefined)
    ? `; the busy processes used ${minutes(used.reduce((a, b) => a + b, 0))} of CPU (${(used.reduce((a, b) => a + b, 0) / seconds).toFixed(2)} cores on average)`
    : "";
  const result = code === 0 ? "passed" : `FAILED (${signal ? `signal ${signal}` : `exit ${code}`})`;
  console.log(`\nci:busy: .ci/run ${result} in ${minutes(seconds)} with ${count} busy process${count === 1 ? "" : "es"} beside it${busyCpu}`);
  process.exit(code ?? 1);
});
