#!/usr/bin/env node
// `npm run mutate`: StrykerJS (stryker.config.mjs) over the files a change touched.
//
//   npm run mutate                                   the src/ files changed against main (committed or not)
//   npm run mutate -- --against origin/main          ... against another ref
//   npm run mutate -- --mutate src/foo.ts,src/bar.ts those files (Stryker's own option; also file:line-line ranges)
//   npm run mutate -- --testFiles test/foo.test.ts   with only these test files (static mutants then ignored: below)
//                                                    any other Stryker option passes through
//
// By default Stryker runs the test files that import a mutated file; a file the Worker imports is
// imported by every workerd test (through src/worker.ts), so naming the test files that matter with
// --testFiles keeps a run to minutes. Files in lua/ are listed, not mutated (Stryker mutates
// JavaScript and TypeScript): try a script's mutations by hand. One runner (concurrency 1): the
// machine's other cores run the suite's servers.
import { execFileSync, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);

/** Takes `--name value` (or `--name=value`) out of args: the value, or undefined. */
function takeOption(name) {
  const i = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  const [flag] = args.splice(i, 1);
  if (flag.includes("=")) return flag.slice(flag.indexOf("=") + 1);
  const [value] = args.splice(i, 1);
  return value;
}

const git = (...gitArgs) => execFileSync("git", gitArgs, { cwd: ROOT, encoding: "utf8" }).split("\n").filter(Boolean);

/** The files changed against `base` (since the branch left it, and not yet committed), that exist now. */
function changedFiles(base) {
  const committed = git("diff", "--name-only", "--diff-filter=d", `${base}...HEAD`);
  const uncommitted = git("diff", "--name-only", "--diff-filter=d", "HEAD");
  const untracked = git("ls-files", "--others", "--exclude-standard");
  return [...new Set([...committed, ...uncommitted, ...untracked])].sort();
}

const against = takeOption("--against") ?? "main";
const named = args.some((a) => a === "--mutate" || a === "-m" || a.startsWith("--mutate="));
let mutate = [];
if (!named) {
  const changed = changedFiles(against);
  mutate = changed.filter((f) => /^src\/.*\.(ts|mts|js|mjs)$/.test(f) && !/\.d\.ts$|\.generated\.ts$/.test(f));
  const scripts = changed.filter((f) => f.startsWith("lua/"));
  if (scripts.length) console.log(`mutate: not mutated (Lua; try their mutations by hand): ${scripts.join(", ")}`);
  if (!mutate.length) {
    console.log(`mutate: no file in src/ changed against ${against}; name files with --mutate src/<file>.ts`);
    process.exit(0);
  }
  console.log(`mutate: the src/ files changed against ${against}: ${mutate.join(", ")}`);
}

// With --testFiles, Stryker 10.1.1 switches a static mutant (one in code run as its module loads: a constant, a
// class field's initial value) on after the module has loaded (stryker-js#6144), so it survives whatever the tests
// do: such mutants are ignored rather than reported as survivors. Without --testFiles they run, on every test file
// that imports the mutated file.
const filtered = args.some((a) => a === "--testFiles" || a === "-t" || a.startsWith("--testFiles="));
if (filtered && !args.includes("--ignoreStatic")) {
  args.push("--ignoreStatic");
  console.log("mutate: --testFiles given, so static mutants are ignored (stryker-js#6144: they would survive whatever the tests do)");
}

const stryker = path.join(ROOT, "node_modules/.bin/stryker");
const strykerArgs = ["run", "stryker.config.mjs", ...(mutate.length ? ["--mutate", mutate.join(",")] : []), ...args];
const child = spawn(stryker, strykerArgs, { cwd: ROOT, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
