import { spawn } from "node:child_process";
import { constants } from "node:os";
import type { Lease } from "../client/index.js";
import { formatDuration } from "./durations.js";
import { EXIT } from "./exitCodes.js";
import { CliError } from "./parseCommand.js";

export interface RunResult {
  /** CMD's exit status (128 + N when signal N ended it). */
  status: number;
  /** The lease was lost while CMD ran, and CMD was told to stop. */
  leaseLost: boolean;
}

/**
 * Runs CMD while the lease is kept. When the lease's signal says it is lost
 * (or may be), CMD gets SIGTERM, then SIGKILL after graceMs. Signals sent to
 * holdfast (Ctrl-C, a supervisor's TERM) go to CMD, so holdfast outlives it
 * and can release the lease.
 *
 * Without a terminal (cron, CI, a service) CMD runs in a process group of
 * its own and the signals go to the whole group, so `sh -c "a; b"` loses its
 * children too. With a terminal CMD stays in the terminal's group (a
 * process in another group cannot read from it), where Ctrl-C reaches it
 * directly; the lease-loss signals then reach CMD itself.
 */
export function runUnderLease(lease: Lease, cmd: string[], graceMs: number, say: (line: string) => void): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const ownGroup = !process.stdin.isTTY;
    const child = spawn(cmd[0], cmd.slice(1), {
      stdio: "inherit",
      detached: ownGroup,
      env: {
        ...process.env,
        HOLDFAST_FENCE: String(lease.fence),
        HOLDFAST_TOKEN: lease.token,
        HOLDFAST_LEASE: JSON.stringify(lease.toJSON()),
      },
    });
    let leaseLost = false;
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    const signal = (sig: NodeJS.Signals) => {
      try {
        if (ownGroup && child.pid) process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        // already gone
      }
    };
    const onLost = () => {
      if (!(lease.signal.reason?.code === "lease_lost")) return; // released: CMD is done already
      leaseLost = true;
      say(
        `the lease on ${lease.name} was lost (${lease.signal.reason.message}); stopping ${cmd[0]} (SIGTERM, SIGKILL in ${formatDuration(graceMs)})`,
      );
      signal("SIGTERM");
      killTimer = setTimeout(() => signal("SIGKILL"), graceMs);
    };
    lease.signal.addEventListener("abort", onLost, { once: true });
    // A terminal's Ctrl-C already reached CMD in its group: sending it again would be a second one.
    const forwarded: NodeJS.Signals[] = ownGroup ? ["SIGINT", "SIGTERM", "SIGHUP"] : ["SIGTERM", "SIGHUP"];
    const forwarders = forwarded.map((sig) => {
      const forward = () => signal(sig);
      process.on(sig, forward);
      return () => process.off(sig, forward);
    });
    const done = () => {
      clearTimeout(killTimer);
      lease.signal.removeEventListener("abort", onLost);
      for (const off of forwarders) off();
    };
    child.on("error", (err: NodeJS.ErrnoException) => {
      done();
      const why = err.code === "ENOENT" ? "not found (is it on PATH?)" : err.code === "EACCES" ? "not executable" : err.message;
      reject(new CliError(`cannot run ${JSON.stringify(cmd[0])}: ${why}`, err.code === "ENOENT" ? EXIT.notFound : EXIT.cannotExecute));
    });
    child.on("exit", (code, signal) => {
      done();
      const status = code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
      resolve({ status, leaseLost });
    });
  });
}
