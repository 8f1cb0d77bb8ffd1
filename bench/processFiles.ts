/**
 * What the bench reads of a process from /proc: which one listens on a port,
 * its RSS, and its room for open files (raised to the hard limit where short).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { until } from "./loop";

/** The process listening on a TCP port of this host (from /proc: the listening socket's inode, then whose fd it is). */
export function pidListeningOn(port: number): number | undefined {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  const inodes = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
    for (const row of text.split("\n").slice(1)) {
      const f = row.trim().split(/\s+/);
      if (f.length > 9 && f[3] === "0A" && f[1].endsWith(hex)) inodes.add(f[9]);
    }
  }
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // not ours, or gone
    }
    for (const fd of fds) {
      try {
        const link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (link.startsWith("socket:[") && inodes.has(link.slice(8, -1))) return Number(pid);
      } catch {}
    }
  }
  return undefined;
}

/** VmRSS of a process, in KiB; NaN when there is no process to read. */
export function rssKiB(pid: number | undefined): number {
  const status = pid ? fs.readFileSync(`/proc/${pid}/status`, "utf8") : "";
  const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return m ? Number(m[1]) : Number.NaN;
}

/** RSS once it stops moving: four readings 250 ms apart within 0.5 % of each other, or after 10 s. */
export async function settledRss(pid: number | undefined): Promise<number> {
  if (!pid) return Number.NaN;
  const readings: number[] = [rssKiB(pid)];
  await until(
    () => {
      readings.push(rssKiB(pid));
      const last = readings.slice(-4);
      return last.length === 4 && Math.max(...last) - Math.min(...last) <= 0.005 * Math.max(...last);
    },
    10_000,
    "RSS to settle",
    250,
  ).catch(() => {}); // still moving after 10 s: the last reading stands
  return readings[readings.length - 1];
}

/** Limits on open files of a process. */
function openFilesLimit(pid: number | "self"): { soft: number; hard: number } {
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, "utf8"));
  const n = (s: string | undefined) => (s === undefined || s === "unlimited" ? Number.POSITIVE_INFINITY : Number(s));
  return { soft: n(m?.[1]), hard: n(m?.[2]) };
}

/**
 * Files a process may still open, `needed` if it can: its soft limit raised
 * to its hard one with prlimit(1) when short (Node cannot set its own).
 */
export function roomForFiles(pid: number | "self", needed: number): number {
  const open = () => fs.readdirSync(`/proc/${pid}/fd`).length;
  let { soft, hard } = openFilesLimit(pid);
  if (soft - open() < needed && hard > soft) {
    const target = pid === "self" ? process.pid : pid;
    try {
      execFileSync("prlimit", [`--pid=${target}`, `--nofile=${hard}:${hard}`], { stdio: "ignore" });
      soft = openFilesLimit(pid).soft;
    } catch {} // no prlimit: the shapes are cut to the room there is
  }
  return soft - open();
}
