#!/usr/bin/env node
// No two top-level folders of src/ import each other (docs/DESIGN.md, "Layers"): the one import
// rule of src/ that dependency-cruiser's from/to rules cannot say (its folder-scope cycles run over
// every folder depth and every cycle length, not over pairs of top-level folders). This runs
// dependency-cruiser's cruise with the repository's own .dependency-cruiser.cjs (type-only imports
// counted), collapses every file to its unit, src/<folder>/ (its subfolders belong to it) or a
// top-level file such as src/env.ts, and reports every two units that import each other.
//
// The pairs still to be undone are listed in .dependency-cruiser-known-folder-pairs.json: a new
// pair fails, and so does a listed one that is gone, so the list only ever shrinks (as
// .dependency-cruiser-known-violations.json does for the rules dependency-cruiser checks itself).
//
//   node tools/check-folder-pairs.mjs           check (npm run check:imports runs it)
//   node tools/check-folder-pairs.mjs --write   rewrite the list from the tree as it is
//                                               (npm run check:imports:baseline runs it)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cruise } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const CONFIG_FILE = path.join(root, ".dependency-cruiser.cjs");
export const KNOWN_VIOLATIONS_FILE = path.join(root, ".dependency-cruiser-known-violations.json");
export const KNOWN_PAIRS_FILE = path.join(root, ".dependency-cruiser-known-folder-pairs.json");

/**
 * The cruise of `tree`/src with the repository's rules (.dependency-cruiser.cjs) and the
 * tsconfig.json of `tree`: the real tree by default, a test's small tree otherwise.
 * `knownViolations` softens those to severity "ignore", as `depcruise --ignore-known` does.
 */
export async function cruiseTree(tree = root, { knownViolations } = {}) {
  const options = await extractDepcruiseOptions(CONFIG_FILE);
  const tsConfig = extractTSConfig(path.join(tree, "tsconfig.json"));
  const { output } = await cruise(
    ["src"],
    { ...options, baseDir: tree, tsConfig: { fileName: path.join(tree, "tsconfig.json") }, ...(knownViolations ? { knownViolations } : {}) },
    {},
    { tsConfig },
  );
  return output;
}

/** The unit a file of src/ belongs to: src/<folder> for a file in a folder (at any depth), else the file itself. */
export function unitOf(file) {
  const parts = file.split("/");
  return parts.length > 2 ? parts.slice(0, 2).join("/") : file;
}

/**
 * Every two units of src/ that import each other, type imports included, as
 * { pair: "a <-> b" (a before b), edges: ["from -> to", ...] (both ways) }, sorted by pair.
 */
export function folderPairs(modules) {
  const edges = new Map();
  for (const m of modules) {
    if (!m.source.startsWith("src/")) continue;
    for (const d of m.dependencies) {
      if (!d.resolved.startsWith("src/")) continue;
      const [a, b] = [unitOf(m.source), unitOf(d.resolved)];
      if (a === b) continue;
      const key = `${a} ${b}`;
      if (!edges.has(key)) edges.set(key, []);
      edges.get(key).push(`${m.source} -> ${d.resolved}`);
    }
  }
  const pairs = [];
  for (const [key, there] of edges) {
    const [a, b] = key.split(" ");
    if (a < b && edges.has(`${b} ${a}`)) pairs.push({ pair: `${a} <-> ${b}`, edges: [...there, ...edges.get(`${b} ${a}`)].sort() });
  }
  return pairs.sort((x, y) => (x.pair < y.pair ? -1 : 1));
}

/** The pairs of the tree against the list: new ones (with their imports) and listed ones that are gone. */
export function comparePairs(found, known) {
  const listed = new Set(known);
  return {
    fresh: found.filter((p) => !listed.has(p.pair)),
    gone: known.filter((k) => !found.some((p) => p.pair === k)),
  };
}

async function main() {
  const found = folderPairs((await cruiseTree()).modules);
  if (process.argv.includes("--write")) {
    fs.writeFileSync(
      KNOWN_PAIRS_FILE,
      `${JSON.stringify(
        found.map((p) => p.pair),
        null,
        2,
      )}\n`,
    );
    console.log(`folder pairs: ${found.length} pairs of src/ folders importing each other written to ${path.relative(root, KNOWN_PAIRS_FILE)}`);
    return;
  }
  const known = JSON.parse(fs.readFileSync(KNOWN_PAIRS_FILE, "utf8"));
  const { fresh, gone } = comparePairs(found, known);
  for (const p of fresh) console.error(`folder pairs: ${p.pair} import each other (new):\n${p.edges.map((e) => `  ${e}`).join("\n")}`);
  for (const k of gone) console.error(`folder pairs: ${k} no longer import each other: take the pair off (npm run check:imports:baseline)`);
  if (fresh.length || gone.length) {
    process.exitCode = 1;
    return;
  }
  console.log(
    known.length
      ? `folder pairs: no new pair of src/ folders importing each other (${known.length} listed in ${path.relative(root, KNOWN_PAIRS_FILE)}, still to undo)`
      : "folder pairs: no two src/ folders import each other",
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
