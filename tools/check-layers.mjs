#!/usr/bin/env node
// The folder layers of src/ (docs/DESIGN.md, "Layers"), kept by CI: a runtime import
// may go to its own layer or one below it, never up; client/ (which ships to browsers)
// imports only the wire layer; and no two folders import each other. Type-only imports
// are free (a layer may name the types of the layers it is handed). Imports that break a
// rule today and are still to be removed are listed in tools/layer-debt.json: a new one
// fails, and so does a listed one that is gone (so the list only ever shrinks).
//
//   node tools/check-layers.mjs           check (npm run check:imports runs it)
//   node tools/check-layers.mjs --write   rewrite the debt list from the tree as it is
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DEBT_FILE = path.join(root, "tools/layer-debt.json");

/**
 * Bottom to top, as docs/DESIGN.md draws them. A file belongs to the first
 * layer with a matching path (a prefix, or a pattern where * is one path
 * segment): a kind's folder spans layers, its routes beside HTTP and its
 * service beside the service layer, while the rest of it sits above the core.
 */
export const LAYERS = [
  {
    layer: "wire",
    paths: [
      "src/wire/",
      "src/errors.ts",
      "src/limits.ts",
      "src/logError.ts",
      "src/tokens.ts",
      "src/deadline.ts",
      "src/jsonDepth.ts",
      "src/validation.ts",
      "src/env.ts",
      // holdfast/fence: the resource's side, for the library and clients alike; nothing of the Worker.
      "src/fence/",
    ],
  },
  { layer: "core", paths: ["src/store/", "src/lockObject/", "src/namespaceObject/", "src/metrics.ts"] },
  { layer: "kinds", paths: ["src/kinds/", "src/holders/"] },
  { layer: "service", paths: ["src/service/", "src/operator/", "src/library/", "src/kinds/*/service.ts"] },
  { layer: "http", paths: ["src/http/", "src/kinds/*/routes.ts", "src/kinds/*/openapi.ts", "src/middleware/"] },
  { layer: "entry", paths: ["src/worker.ts", "src/index.ts", "src/hono.ts", "src/client/", "src/cli/"] },
];
/** Folders that may import only these layers, whatever their own. */
const ONLY = { "src/client/": ["wire"] };

const matches = (file, p) =>
  p.includes("*") ? new RegExp(`^${p.replace(/[.]/g, "\\.").replace(/\*/g, "[^/]+")}$`).test(file) : file === p || file.startsWith(p);
/** The layer of a file: its pattern match wins over a folder prefix (a kind's routes are HTTP, not the kind's layer). */
const layerIndex = (file) => {
  const exact = LAYERS.findIndex((l) => l.paths.some((p) => p.includes("*") && matches(file, p)));
  if (exact >= 0) return exact;
  // The longest prefix wins: src/primitives/middleware/ is HTTP though src/primitives/ is the service layer.
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((l, i) => {
    for (const p of l.paths) if (!p.includes("*") && matches(file, p) && p.length > bestLength) [best, bestLength] = [i, p.length];
  });
  return best;
};
const folderOf = (file) => {
  const parts = file.split("/");
  return parts.length > 2 ? parts.slice(0, 2).join("/") : file;
};

function sourceFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.ts$/.test(entry.name) && !/\.d\.ts$/.test(entry.name) && !/\.generated\.ts$/.test(entry.name)) out.push(rel);
  }
  return out;
}

/** The runtime imports of a file, as repository paths (type-only imports left out). */
export function runtimeImports(file, text) {
  const found = [];
  // One statement's clause never holds a ";": so a package's type import is never read as the start of the next one.
  const statement = /^(?:import|export)\s+([^;]*?)\s+from\s+["'](\.[^"']+)["']/gm;
  for (const m of text.matchAll(statement)) {
    const clause = m[1].trim();
    if (/^type\s/.test(clause)) continue;
    const braces = /^\{([\s\S]*)\}$/.exec(clause);
    if (braces?.[1].split(",").every((s) => !s.trim() || /^type\s/.test(s.trim()))) continue;
    found.push(m[2]);
  }
  for (const m of text.matchAll(/^import\s+["'](\.[^"']+)["']/gm)) found.push(m[1]);
  for (const m of text.matchAll(/\bimport\(\s*["'](\.[^"']+)["']\s*\)/g)) found.push(m[1]);
  return found.map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, ".ts"));
}

/** Every import that breaks a rule, as "from -> to (rule)". */
export function violations(files) {
  const out = new Set();
  const folderEdges = new Map();
  for (const [from, text] of files) {
    const fromLayer = layerIndex(from);
    for (const to of runtimeImports(from, text)) {
      if (!to.startsWith("src/")) continue;
      const toLayer = layerIndex(to);
      if (fromLayer < 0 || toLayer < 0) {
        out.add(`${from} -> ${to} (a file in no layer: add it to LAYERS in tools/check-layers.mjs)`);
        continue;
      }
      const only = Object.entries(ONLY).find(([prefix]) => from.startsWith(prefix));
      if (only && !to.startsWith(only[0]) && !only[1].includes(LAYERS[toLayer].layer)) {
        out.add(`${from} -> ${to} (${only[0]} imports only ${only[1].join(", ")})`);
      } else if (toLayer > fromLayer) {
        out.add(`${from} -> ${to} (${LAYERS[fromLayer].layer} imports ${LAYERS[toLayer].layer}, a layer above it)`);
      }
      const [a, b] = [folderOf(from), folderOf(to)];
      if (a !== b) {
        if (!folderEdges.has(`${a} ${b}`)) folderEdges.set(`${a} ${b}`, []);
        folderEdges.get(`${a} ${b}`).push(`${from} -> ${to}`);
      }
    }
  }
  for (const [pair, edges] of folderEdges) {
    const [a, b] = pair.split(" ");
    if (!folderEdges.has(`${b} ${a}`)) continue;
    for (const e of edges) out.add(`${e} (${a} and ${b} import each other)`);
  }
  return [...out].sort();
}

function main() {
  const files = sourceFiles("src").map((f) => [f, fs.readFileSync(path.join(root, f), "utf8")]);
  const found = violations(files);
  if (process.argv.includes("--write")) {
    fs.writeFileSync(DEBT_FILE, `${JSON.stringify(found, null, 2)}\n`);
    console.log(`layers: ${found.length} imports against the layers written to tools/layer-debt.json`);
    return;
  }
  const debt = new Set(JSON.parse(fs.readFileSync(DEBT_FILE, "utf8")));
  const fresh = found.filter((v) => !debt.has(v));
  const gone = [...debt].filter((v) => !found.includes(v));
  for (const v of fresh) console.error(`layers: new import against the layers: ${v}`);
  for (const v of gone) console.error(`layers: no longer in the tree, take it off tools/layer-debt.json: ${v}`);
  if (fresh.length || gone.length) process.exit(1);
  console.log(
    debt.size
      ? `layers: no new import against the layers (${debt.size} listed in tools/layer-debt.json, still to remove)`
      : "layers: every import keeps to the layers",
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
