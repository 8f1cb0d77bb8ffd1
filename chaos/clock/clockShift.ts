/**
 * Builds the clockshift shim (clockshift.c) once per run with the system C
 * compiler, installing gcc with apt-get when it is missing (root on Debian,
 * as CI), and gives each redis-server its own offset file to move its clock.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), "clockshift.c");

let built: string | undefined;

/** The shim's .so path, built on first use. */
export function clockShiftLibrary(): string {
  if (built) return built;
  if (!hasCompiler()) {
    if (process.getuid?.() !== 0) throw new Error("the chaos suite needs a C compiler for its clock shim: apt-get install -y gcc");
    console.warn("gcc not found; installing it with apt-get (running as root)");
    execFileSync("sh", ["-c", "apt-get update && apt-get install -y gcc libc6-dev"], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  }
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-clockshift-")), "clockshift.so");
  execFileSync("cc", ["-shared", "-fPIC", "-O2", "-o", out, SOURCE]);
  built = out;
  return out;
}

function hasCompiler(): boolean {
  try {
    execFileSync("cc", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** One process's clock offset: a file the shim maps, rewritten in place (never replaced, so the mapping sees it). */
export class ClockOffset {
  readonly file: string;

  constructor(dir: string) {
    this.file = path.join(dir, "clock-offset");
    fs.writeFileSync(this.file, Buffer.alloc(8));
  }

  set(ms: number): void {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt(Math.round(ms * 1000)));
    const fd = fs.openSync(this.file, "r+");
    try {
      fs.writeSync(fd, buf, 0, 8, 0);
    } finally {
      fs.closeSync(fd);
    }
  }
}
