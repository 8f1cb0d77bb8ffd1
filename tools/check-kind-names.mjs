#!/usr/bin/env node
// The core names no kind (docs/DESIGN.md, issue 45): no string literal in the code of src/lockObject,
// src/store, src/service, src/http, src/wire, src/operator, src/namespaceObject, src/admission or the core's top-level
// files is a kind's name (a folder of src/kinds/) or a kind's mount point. What differs per kind is a
// property of its descriptor (src/kinds/<kind>/index.ts). Comments may name kinds.
//
//   node tools/check-kind-names.mjs      exits 1 and lists each literal found
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CORE = ["src/lockObject", "src/store", "src/service", "src/http", "src/wire", "src/operator", "src/namespaceObject", "src/admission"];
const CORE_FILES = ["src/env.ts", "src/errors.ts", "src/metrics.ts", "src/limits.ts", "src/deadline.ts", "src/tokens.ts", "src/validation.ts"];

/** The kinds' names: the folders of src/kinds/ with a descriptor (index.ts; each kind's folder is its name, manyHolders/ is shared code). */
export function kindNamesIn(rootDir) {
  const dir = path.join(rootDir, "src/kinds");
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(dir, e.name, "index.ts")))
    .map((e) => e.name);
}

/** The code of a TypeScript file without its comments (strings kept as they are). */
function withoutComments(text) {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      out += text.slice(i, end < 0 ? text.length : end + 2).replace(/[^\n]/g, " ");
      i = end < 0 ? text.length : end + 1;
    } else out += c;
  }
  return out;
}

/** Every string literal naming a kind in these files' code, as "file:line: literal". */
export function kindNameLiterals(files, names) {
  const found = [];
  const literal = new RegExp(`(["'\`])(${names.join("|")})\\1`, "g");
  for (const [file, text] of files) {
    const lines = withoutComments(text).split("\n");
    lines.forEach((line, i) => {
      for (const m of line.matchAll(literal)) found.push(`${file}:${i + 1}: ${m[0]}`);
    });
  }
  return found;
}

function coreFiles(rootDir) {
  const out = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(rootDir, rel), { withFileTypes: true })) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(r);
      else if (r.endsWith(".ts") && !r.endsWith(".generated.ts")) out.push(r);
    }
  };
  for (const dir of CORE) walk(dir);
  for (const f of CORE_FILES) if (fs.existsSync(path.join(rootDir, f))) out.push(f);
  return out.map((f) => [f, fs.readFileSync(path.join(rootDir, f), "utf8")]);
}

export function check(rootDir = root) {
  return kindNameLiterals(coreFiles(rootDir), kindNamesIn(rootDir));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = check();
  for (const f of found) console.error(`kind names: the core names a kind: ${f}`);
  if (found.length) process.exit(1);
  console.log("kind names: no core file names a kind");
}
