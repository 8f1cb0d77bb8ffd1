#!/usr/bin/env node
// The Worker's deploy bundle stays within its budget: 100 KiB gzip (issue 54), measured as
// `wrangler deploy` measures its "Total Upload" (every module it would upload, concatenated,
// gzipped at zlib's default level). Builds the bundle the way `npm run deploy` does
// (`wrangler deploy --dry-run`, wrangler.toml's minify and conditions; run after
// tools/generate.mjs, as `npm run check:bundle` does), prints the figure and the inputs that
// take the most room (esbuild's metafile), and exits 1 over the budget.
//
//   node tools/check-bundle.mjs            the figure, the 15 biggest inputs; exit 1 over budget
//   node tools/check-bundle.mjs --top=40   more inputs (--top=0: none)
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** The budget, in bytes of gzip (Workers' free plan allows 3 MiB; ours is what a cold start parses). */
const BUDGET_GZIP_BYTES = 100 * 1024;
const top = Number(process.argv.find((a) => a.startsWith("--top="))?.slice("--top=".length) ?? 15);

const out = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-bundle-"));
try {
  const meta = path.join(out, "meta.json");
  const build = path.join(out, "build");
  try {
    execFileSync(
      process.execPath,
      [path.join(root, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", build, "--metafile", meta],
      {
        cwd: root,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", FORCE_COLOR: "0" },
        // Its own lines (bindings, its figure) are not ours to repeat; its errors are shown as they come.
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
  } catch {
    console.error("wrangler deploy --dry-run failed (above): the Worker does not bundle");
    fs.rmSync(out, { recursive: true, force: true });
    process.exit(1);
  }
  // What wrangler uploads: every module it wrote (not its README or the source maps).
  const modules = /** @type {string[]} */ (fs.readdirSync(build, { recursive: true }))
    .filter((f) => !f.endsWith(".map") && f !== "README.md" && fs.statSync(path.join(build, f)).isFile())
    .sort();
  const bytes = Buffer.concat(modules.map((f) => fs.readFileSync(path.join(build, f))));
  const gzip = gzipSync(bytes).length;
  const kib = (/** @type {number} */ n) => `${(n / 1024).toFixed(2)} KiB`;
  console.log(`Worker bundle: ${kib(bytes.length)} / gzip: ${kib(gzip)} (${modules.join(", ")}); budget ${kib(BUDGET_GZIP_BYTES)} gzip`);
  if (top > 0) printBiggestInputs(JSON.parse(fs.readFileSync(meta, "utf8")), top);
  if (gzip > BUDGET_GZIP_BYTES) {
    console.error(
      `the Worker's bundle is ${kib(gzip - BUDGET_GZIP_BYTES)} over its budget of ${kib(BUDGET_GZIP_BYTES)} gzip: see what takes the room above`,
    );
    process.exitCode = 1;
  }
} finally {
  fs.rmSync(out, { recursive: true, force: true });
}

/**
 * The inputs that put the most bytes in the bundle (after minifying and tree shaking), each
 * package's files summed as one line beside our own files.
 * @param {{ outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }> }} metafile
 * @param {number} count
 */
function printBiggestInputs(metafile, count) {
  /** @type {Map<string, number>} */
  const byInput = new Map();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1];
      const name = pkg ? `${pkg} (package)` : input;
      byInput.set(name, (byInput.get(name) ?? 0) + bytesInOutput);
    }
  }
  const ranked = [...byInput].sort((a, b) => b[1] - a[1]).slice(0, count);
  for (const [name, n] of ranked) console.log(`${String(n).padStart(8)} B  ${name}`);
}
