// The import rules of src/ (docs/DESIGN.md, "Layers"), checked by dependency-cruiser:
// `npm run check:imports` (in CI) runs it with the known-violations baseline
// (.dependency-cruiser-known-violations.json), then tools/check-folder-pairs.mjs for the one
// rule a from/to rule cannot say (two top-level folders of src/ importing each other).
// `npm run check:imports:baseline` rewrites both baselines from the tree as it is.
//
// Type-only imports count everywhere (tsPreCompilationDeps): a type import ties two
// files together for the reader and the compiler as much as a value import does.

// The layers, bottom to top. A file may import its own layer or one below it.
// A kind's service.ts is the service layer and its operations.ts (its routes, as values) the HTTP layer,
// though they sit in src/kinds/<kind>/ (whose other files are the kinds layer; src/kinds/manyHolders/ is
// what the many-holder kinds share, its service.ts their force release); its descriptor
// (index.ts, defineKind in src/kinds/kind.ts; for the many-holder kinds, the part of it they share,
// src/kinds/manyHolders/holdersKind.ts) joins every layer's part of it, so it is at the top,
// with the entry points whose lists name it.
const KIND_SERVICE = ["^src/kinds/[^/]+/service\\.ts$"];
const KIND_HTTP = "^src/kinds/[^/]+/operations\\.ts$";
const KIND_DESCRIPTOR = ["^src/kinds/[^/]+/index\\.ts$", "^src/kinds/kind\\.ts$", "^src/kinds/manyHolders/holdersKind\\.ts$"];
const WIRE = ["^src/(wire|fence)/", "^src/(errors|limits|logError|tokens|deadline|jsonDepth|validation)\\.ts$"];
// env.ts is the Worker's bindings, the two Durable Objects' RPC types among them (src/store/durable/).
const CORE = ["^src/(store|lockObject|namespaceObject|admission)/", "^src/(metrics|env)\\.ts$"];
const KINDS = ["^src/kinds/"]; // less KIND_SERVICE and KIND_HTTP (see kindsLayer below)
const SERVICE = ["^src/(service|operator|library)/", ...KIND_SERVICE];
const HTTP = ["^src/(http|middleware)/", KIND_HTTP];
const ENTRY = ["^src/(worker|index|hono)\\.ts$", "^src/(client|cli|worker)/", ...KIND_DESCRIPTOR]; // src/worker/: worker.ts's own parts

const kindsLayer = { path: KINDS, pathNot: [...KIND_SERVICE, KIND_HTTP, ...KIND_DESCRIPTOR] };
const LAYERS = [
  ["wire", { path: WIRE }],
  ["core", { path: CORE }],
  ["kinds", kindsLayer],
  ["service", { path: SERVICE }],
  ["http", { path: HTTP }],
  ["entry", { path: ENTRY }],
];

/** One rule per layer below the top: nothing of it imports a layer above it. */
const upwardRules = LAYERS.slice(0, -1).map(([name, from], i) => {
  const below = LAYERS.slice(0, i + 1).map(([n]) => n);
  return {
    name: `layer-${name}-imports-up`,
    severity: "error",
    comment: `The ${name} layer imports only ${below.join(", ")}: an import up the layers ties a layer to what is built on it, so neither can be changed or read alone.`,
    from,
    // The union of the layers above (a kind's service.ts and operations.ts are in the service and HTTP rows themselves).
    to: { path: LAYERS.slice(i + 1).flatMap(([, r]) => r.path) },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "No import circles in src/, type imports included: a circle makes its files one unit that cannot be read, " +
        "tested or loaded apart, and a value circle can leave an import undefined at module load.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    ...upwardRules,
    {
      name: "client-imports-only-wire",
      severity: "error",
      comment: "src/client/ ships to browsers: it imports only itself and the wire layer, never the Worker, the stores or Node-only code.",
      from: { path: "^src/client/" },
      to: { path: "^src/", pathNot: ["^src/client/", ...WIRE] },
    },
    {
      name: "core-imports-no-kinds",
      severity: "error",
      comment:
        "The core knows no kind, not even a kind's types: the lock object, the stores, the namespace object, the service and HTTP " +
        "layers, the wire and the operator work with what they are handed (src/worker.ts and src/library/ hand them the kinds), " +
        "so adding or changing a kind changes none of them.",
      from: { path: "^src/(lockObject|store|service|http|wire|operator|namespaceObject|admission)/" },
      to: { path: "^src/kinds/" },
    },
    {
      name: "line-imports-no-sockets",
      severity: "error",
      comment:
        "The lock object's line (src/lockObject/line/) is driven by its callers and knows none of them: the wait and watch " +
        "sockets (sockets/) and the expiries (expiries/) import the line, never the other way, so the line reads and tests alone.",
      from: { path: "^src/lockObject/line/" },
      to: { path: "^src/lockObject/(sockets|expiries)/" },
    },
    {
      name: "in-a-layer",
      severity: "error",
      comment:
        "Every file of src/ is in one of the layers: a new folder or top-level file gets a row in the layers of .dependency-cruiser.cjs " +
        "(and docs/DESIGN.md), or the layer rules would not see it.",
      from: { path: "^src/", pathNot: [...WIRE, ...CORE, ...KINDS, ...SERVICE, ...HTTP, ...ENTRY] },
      to: {},
    },
    {
      name: "to-a-layer",
      severity: "error",
      comment: "The same, seen from the importer: an import of a src/ file that is in no layer.",
      from: { path: "^src/" },
      to: { path: "^src/", pathNot: [...WIRE, ...CORE, ...KINDS, ...SERVICE, ...HTTP, ...ENTRY] },
    },
    {
      name: "resolvable",
      severity: "error",
      comment:
        "Every relative import resolves to a file: an import the cruise cannot follow is one no rule above can see " +
        "(run `node tools/generate.mjs` first: the generated files exist only after it).",
      from: { path: "^src/" },
      to: { couldNotResolve: true, path: "^\\.\\.?/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // A known violation that is gone fails too, so the baseline only shrinks (npm run check:imports:baseline rewrites it).
    baseline: { staleEntriesSeverity: "error" },
  },
};
