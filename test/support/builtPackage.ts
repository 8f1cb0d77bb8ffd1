import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

/**
 * A scratch project as a user has it after installing the package: node_modules/holdfast is the
 * package built for users (its package.json, dist/ from tsconfig.build.json), beside its dependencies
 * (linked from this repository's), and a package.json of type module.
 */
export async function installBuiltPackage(dir: string): Promise<void> {
  const pkg = path.join(dir, "node_modules/holdfast");
  fs.mkdirSync(pkg, { recursive: true });
  fs.copyFileSync(path.join(ROOT, "package.json"), path.join(pkg, "package.json"));
  await run(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json", "--outDir", path.join(pkg, "dist")], {
    cwd: ROOT,
  });
  for (const dep of ["@upstash/redis", "hono", "zod"]) {
    fs.mkdirSync(path.dirname(path.join(dir, "node_modules", dep)), { recursive: true });
    fs.symlinkSync(path.join(ROOT, "node_modules", dep), path.join(dir, "node_modules", dep));
  }
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ private: true, type: "module" }));
}
