// One bundle of this repository's Worker for a whole test run, rather than one per test file:
// each Node test file runs in a process of its own, and bundling there (tools/generate.mjs, then
// `wrangler deploy --dry-run`) took a few seconds of CPU per file. The run's main process
// (test/setup/global-stack.ts) answers GET on a local port with the bundle, built when first
// asked and again whenever src/, lua/ or wrangler.toml changed since (so a test never serves a
// Worker older than the sources); serve.mjs's bundleWorker() asks there when
// HOLDFAST_WORKER_BUNDLE_URL is set, and builds its own otherwise (bench, chaos, npm start).
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildBundle } from "./serve.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** What the bundle is made from (tools/generate.mjs writes into src/ from lua/). */
const SOURCES = ["src", "lua", "wrangler.toml"];

/** A hash of every source file's path and content. */
function sourcesHash() {
  const hash = createHash("sha1");
  const add = (/** @type {string} */ rel) => {
    const full = path.join(ROOT, rel);
    if (fs.statSync(full).isDirectory()) {
      for (const entry of fs.readdirSync(full).sort()) add(path.join(rel, entry));
    } else hash.update(`${rel}\0`).update(fs.readFileSync(full)).update("\0");
  };
  for (const source of SOURCES) add(source);
  return hash.digest("hex");
}

/**
 * Serves the bundle on 127.0.0.1 (a free port) until closed.
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export async function startBundleServer() {
  /** @type {{ hash: string, bundle: Promise<import("./serve.mjs").Bundle> } | undefined} */
  let built;
  /** @type {Promise<import("./serve.mjs").Bundle> | undefined} */
  let building;
  async function current() {
    if (building) return building; // asked again while building: that build
    if (built && built.hash === sourcesHash()) return built.bundle;
    building = buildBundle(ROOT);
    try {
      const bundle = await building;
      // Hashed after the build: its generate step may rewrite generated files in src/.
      built = { hash: sourcesHash(), bundle: building };
      return bundle;
    } finally {
      building = undefined;
    }
  }
  const server = http.createServer((_req, res) => {
    current().then(
      (bundle) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(bundle)),
      (err) => res.writeHead(500, { "content-type": "text/plain" }).end(String(err?.message ?? err)),
    );
  });
  await new Promise((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      }),
  };
}
