// The import rules CI keeps (npm run check:imports: dependency-cruiser with .dependency-cruiser.cjs, then
// tools/check-folder-pairs.mjs), run with the repository's own rules on small trees written for each case:
// an import up the layers, a client import of anything but the wire layer, the core importing a kind, an
// import circle and two folders importing each other are caught, type-only imports included; imports down
// the layers are not. And the real src/ breaks no rule beyond the committed baselines, which only shrink.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ICruiseResult } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";
import { comparePairs, cruiseTree, folderPairs, KNOWN_PAIRS_FILE, KNOWN_VIOLATIONS_FILE } from "../../tools/check-folder-pairs.mjs";

const trees: string[] = [];
afterAll(() => {
  for (const dir of trees) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh tree of these files (paths from the tree's root) with a tsconfig.json, cruised with the repository's rules. */
async function cruise(files: Record<string, string>): Promise<ICruiseResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-layers-"));
  trees.push(dir);
  const compilerOptions = { target: "ES2022", module: "ES2022", moduleResolution: "Bundler", strict: true, noEmit: true };
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["src"] }));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return cruiseTree(dir);
}

/** The rules a cruise found broken, as "from -> to (rule)", errors only (known violations are softened to "ignore"). */
const broken = (result: ICruiseResult) =>
  result.summary.violations
    .filter((v) => v.rule.severity === "error")
    .map((v) => `${v.from} -> ${v.to} (${v.rule.name})`)
    .sort();

describe("the import rules (.dependency-cruiser.cjs)", () => {
  it("catch a planted upward import: the core importing HTTP", async () => {
    const result = await cruise({
      "src/store/x.ts": 'import { app } from "../http/app.js";\nexport const x = app;\n',
      "src/http/app.ts": "export const app = 1;\n",
    });
    expect(broken(result)).toEqual(["src/store/x.ts -> src/http/app.ts (layer-core-imports-up)"]);
  });

  it("count type-only imports: the core naming a kind's type breaks the layers and the core's own rule", async () => {
    const result = await cruise({
      "src/store/types.ts": 'import type { MutexOps } from "../kinds/mutex/types.js";\nexport type Ops = MutexOps;\n',
      "src/lockObject/x.ts": 'import { type Wait } from "../kinds/manyHolders/wait.js";\nexport type W = Wait;\n',
      "src/kinds/mutex/types.ts": "export type MutexOps = { a: 1 };\n",
      "src/kinds/manyHolders/wait.ts": "export type Wait = { b: 2 };\n",
    });
    expect(broken(result)).toEqual([
      "src/lockObject/x.ts -> src/kinds/manyHolders/wait.ts (core-imports-no-kinds)",
      "src/lockObject/x.ts -> src/kinds/manyHolders/wait.ts (layer-core-imports-up)",
      "src/store/types.ts -> src/kinds/mutex/types.ts (core-imports-no-kinds)",
      "src/store/types.ts -> src/kinds/mutex/types.ts (layer-core-imports-up)",
    ]);
  });

  it("keep the service and HTTP layers off the kinds too, though the kinds are below them", async () => {
    const result = await cruise({
      "src/service/flow.ts": 'import type { MutexOps } from "../kinds/mutex/types.js";\nexport type F = MutexOps;\n',
      "src/middleware/lock.ts": 'import type { MutexOps } from "../kinds/mutex/types.js";\nexport type M = MutexOps;\n',
      "src/kinds/mutex/types.ts": "export type MutexOps = { a: 1 };\n",
    });
    // src/middleware/ is HTTP but not the core: it may use a kind.
    expect(broken(result)).toEqual(["src/service/flow.ts -> src/kinds/mutex/types.ts (core-imports-no-kinds)"]);
  });

  it("let imports go down the layers", async () => {
    const result = await cruise({
      "src/worker.ts": 'import { app } from "./http/app.js";\nimport { routes } from "./kinds/mutex/operations.js";\nexport default [app, routes];\n',
      "src/http/app.ts":
        'import { flow } from "../service/flow.js";\nimport { LockedError } from "../errors.js";\nexport const app = [flow, LockedError];\n',
      "src/kinds/mutex/operations.ts":
        'import { app } from "../../http/app.js";\nimport { acquire } from "./service.js";\nexport const routes = [app, acquire];\n',
      "src/kinds/mutex/service.ts":
        'import { flow } from "../../service/flow.js";\nimport { MUTEX } from "./types.js";\nexport const acquire = [flow, MUTEX];\n',
      "src/service/flow.ts": 'import type { LockStore } from "../store/types.js";\nexport const flow = (s: LockStore) => s;\n',
      "src/kinds/mutex/types.ts": 'import type { LockStore } from "../../store/types.js";\nexport const MUTEX = 1;\nexport type S = LockStore;\n',
      "src/store/types.ts": 'import type { Answer } from "../wire/answer.js";\nexport type LockStore = { a: Answer };\n',
      "src/wire/answer.ts": 'import { LockedError } from "../errors.js";\nexport type Answer = typeof LockedError;\n',
      "src/errors.ts": "export class LockedError extends Error {}\n",
    });
    expect(broken(result)).toEqual([]);
  });

  it("read a kind's operations as HTTP and its service as the service layer, its other files as the kinds layer", async () => {
    const result = await cruise({
      "src/kinds/mutex/operations.ts":
        'import { lockName } from "../../http/lockName.js";\nimport { acquire } from "./service.js";\nexport const r = [lockName, acquire];\n',
      "src/kinds/mutex/service.ts": 'import { ctx } from "../../service/context.js";\nexport const acquire = ctx;\n',
      "src/kinds/mutex/redisMutex.ts":
        'import { lockName } from "../../http/lockName.js";\nimport { ctx } from "../../service/context.js";\nexport const m = [lockName, ctx];\n',
      "src/http/lockName.ts": "export const lockName = 1;\n",
      "src/service/context.ts": "export const ctx = 1;\n",
    });
    expect(broken(result)).toEqual([
      "src/kinds/mutex/redisMutex.ts -> src/http/lockName.ts (layer-kinds-imports-up)",
      "src/kinds/mutex/redisMutex.ts -> src/service/context.ts (layer-kinds-imports-up)",
    ]);
  });

  it("keep the client to itself and the wire layer (it ships to browsers)", async () => {
    const result = await cruise({
      "src/client/x.ts":
        'import { SOCKET } from "../lockObject/socket.js";\nimport { parse } from "../wire/parse.js";\nimport { y } from "./y.js";\nexport const x = [SOCKET, parse, y];\n',
      "src/client/y.ts": 'import { LockedError } from "../errors.js";\nexport const y = LockedError;\n',
      "src/lockObject/socket.ts": "export const SOCKET = 1;\n",
      "src/wire/parse.ts": "export const parse = 1;\n",
      "src/errors.ts": "export class LockedError extends Error {}\n",
    });
    expect(broken(result)).toEqual(["src/client/x.ts -> src/lockObject/socket.ts (client-imports-only-wire)"]);
  });

  it("keep the lock object's line off its sockets and its expiries, type imports included; they may use the line", async () => {
    const result = await cruise({
      "src/lockObject/line/Line.ts": 'import type { Caps } from "../sockets/caps.js";\nexport type L = Caps;\n',
      "src/lockObject/line/Order.ts": 'import { keep } from "../expiries/keep.js";\nexport const o = keep;\n',
      "src/lockObject/sockets/caps.ts": "export type Caps = { n: number };\n",
      "src/lockObject/sockets/WaitSockets.ts": 'import { o } from "../line/Order.js";\nexport const w = o;\n',
      "src/lockObject/expiries/keep.ts": "export const keep = 1;\n",
    });
    expect(broken(result)).toEqual([
      "src/lockObject/line/Line.ts -> src/lockObject/sockets/caps.ts (line-imports-no-sockets)",
      "src/lockObject/line/Order.ts -> src/lockObject/expiries/keep.ts (line-imports-no-sockets)",
    ]);
  });

  it("catch an import circle, type imports included", async () => {
    const result = await cruise({
      "src/store/a.ts": 'import type { B } from "./b.js";\nexport type A = { b?: B };\n',
      "src/store/b.ts": 'import type { C } from "./c.js";\nexport type B = { c?: C };\n',
      "src/store/c.ts": 'import type { A } from "./a.js";\nexport type C = { a?: A };\n',
    });
    // One report per circle, at the import where the cruise closed it.
    expect(broken(result)).toHaveLength(1);
    expect(broken(result)[0]).toMatch(/^src\/store\/[abc]\.ts -> src\/store\/[abc]\.ts \(no-circular\)$/);
    const [circle] = result.summary.violations;
    expect(circle.cycle?.map((step) => step.name).sort()).toEqual(["src/store/a.ts", "src/store/b.ts", "src/store/c.ts"]);
  });

  it("name a file that belongs to no layer, and an import that resolves to no file", async () => {
    const result = await cruise({
      "src/http/a.ts": 'import { b } from "../somewhere/b.js";\nimport { c } from "./missing.js";\nexport const a = [b, c];\n',
      "src/somewhere/b.ts": 'import { LockedError } from "../errors.js";\nexport const b = LockedError;\n',
      "src/errors.ts": "export class LockedError extends Error {}\n",
    });
    expect(broken(result)).toEqual([
      "src/http/a.ts -> ./missing.js (resolvable)",
      "src/http/a.ts -> src/somewhere/b.ts (to-a-layer)",
      "src/somewhere/b.ts -> src/errors.ts (in-a-layer)",
    ]);
  });
});

describe("the folder pairs (tools/check-folder-pairs.mjs)", () => {
  it("catch two folders that import each other (a subfolder is its folder's, a top-level file its own), type imports included", async () => {
    const result = await cruise({
      "src/store/a.ts": 'import { b } from "../lockObject/line/b.js";\nexport const a = b;\n',
      "src/lockObject/line/b.ts": 'export const b = 1;\nexport type { A } from "../c.js";\n',
      "src/lockObject/c.ts": 'import type { a } from "../store/a.js";\nexport type A = typeof a;\n',
      "src/env.ts": 'import type { W } from "./wire/w.js";\nexport type Env = W;\n',
      "src/wire/w.ts": 'import type { Env } from "../env.js";\nexport type W = { env?: Env };\n',
      "src/wire/v.ts": 'import type { W } from "./w.js";\nexport type V = W;\n',
    });
    const found = folderPairs(result.modules);
    expect(found).toEqual([
      { pair: "src/env.ts <-> src/wire", edges: ["src/env.ts -> src/wire/w.ts", "src/wire/w.ts -> src/env.ts"] },
      { pair: "src/lockObject <-> src/store", edges: ["src/lockObject/c.ts -> src/store/a.ts", "src/store/a.ts -> src/lockObject/line/b.ts"] },
    ]);
    // Against a list: a pair not on it is new, and a listed pair that is gone must come off it.
    const { fresh, gone } = comparePairs(found, ["src/lockObject <-> src/store", "src/http <-> src/service"]);
    expect(fresh.map((p) => p.pair)).toEqual(["src/env.ts <-> src/wire"]);
    expect(gone).toEqual(["src/http <-> src/service"]);
  });
});

describe("the real src/", () => {
  it("breaks no import rule and has no folder pair beyond the committed baselines, and every listed one is still there", async () => {
    const knownViolations = JSON.parse(fs.readFileSync(KNOWN_VIOLATIONS_FILE, "utf8"));
    const result = await cruiseTree(undefined, { knownViolations });
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(broken(result), "new violations: fix them (npm run check:imports explains each)").toEqual([]);
    expect(result.summary.baselineStale ?? 0, "known violations that are gone: npm run check:imports:baseline").toBe(0);
    const { fresh, gone } = comparePairs(folderPairs(result.modules), JSON.parse(fs.readFileSync(KNOWN_PAIRS_FILE, "utf8")));
    expect(fresh, "new pairs of folders importing each other").toEqual([]);
    expect(gone, "listed pairs that are gone: npm run check:imports:baseline").toEqual([]);
  });
});
