#!/usr/bin/env node
// `npm run lockfile:platforms`, after any `npm install` that changed package-lock.json.
//
// The registry this project is built from here mirrors only some platforms'
// builds of recent releases (workerd's and Biome's macOS, Windows and musl
// packages are missing for their newest versions). npm then writes a lockfile
// without those optional packages, and `npm ci` - CI's install - refuses it as
// out of sync with package.json. This adds, for every optional dependency the
// lockfile lacks, the entry npm writes from a full registry: name, version,
// os/cpu/libc, optional. npm ci skips it on any other platform; on its own
// platform npm fetches it by version (no integrity is recorded for it).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const LOCKFILE = path.join(path.dirname(fileURLToPath(import.meta.url)), "../package-lock.json");
const lock = JSON.parse(fs.readFileSync(LOCKFILE, "utf8"));
const entries = lock.packages;

/** Whether Node finds `dep` from the package at `location`, at `version` when that is exact (a range: any). */
function resolves(location, dep, version) {
  let from = location;
  for (;;) {
    const candidate = `${from ? `${from}/` : ""}node_modules/${dep}`;
    if (entries[candidate]) return !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version) || entries[candidate].version === version;
    if (!from) return false;
    const up = from.lastIndexOf("/node_modules/");
    from = up < 0 ? "" : from.slice(0, up);
  }
}

/** The platform a package name says it is built for (the only packages this applies to). */
function platformOf(name) {
  const base = name.split("/").pop();
  const os = [
    [/darwin/, "darwin"],
    [/win32|windows/, "win32"],
    [/android/, "android"],
    [/linux/, "linux"],
    [/freebsd/, "freebsd"],
  ].find(([re]) => re.test(base))?.[1];
  const cpu = /arm64/.test(base) ? "arm64" : /x64|-64$/.test(base) ? "x64" : undefined;
  return os && cpu ? { os, cpu, musl: /musl/.test(base) } : undefined;
}

const added = [];
for (const [location, entry] of Object.entries(entries)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolves(location, dep, version)) continue;
    const platform = platformOf(dep);
    if (!platform)
      throw new Error(`${location || "the project"} has an optional dependency ${dep}@${version} the lockfile lacks, and it names no platform`);
    // Beside the package that depends on it, as npm places a dependency whose version differs from the hoisted one.
    const at = `${location.slice(0, location.lastIndexOf("node_modules/"))}node_modules/${dep}`;
    entries[at] = {
      version,
      cpu: [platform.cpu],
      ...(entry.dev && { dev: true }),
      ...(platform.musl && { libc: ["musl"] }),
      optional: true,
      os: [platform.os],
    };
    added.push(`${at}@${version}`);
  }
}
if (added.length) {
  lock.packages = Object.fromEntries(Object.entries(entries).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
  fs.writeFileSync(LOCKFILE, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(
  added.length
    ? `lockfile: added ${added.length} platform entries:\n  ${added.join("\n  ")}`
    : "lockfile: every optional platform package has its entry",
);
