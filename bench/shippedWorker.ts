/**
 * The Worker as it ships: the size of the bundle `wrangler deploy` uploads
 * (raw, and gzip as the upload limit counts it) and its cold start in workerd,
 * next to a hello-world Worker (bench/helloWorker) in the same run. A cold
 * start here is process start to first answer: workerd loads and compiles
 * every module before it listens, so this is parsing our code at startup plus
 * one request, with workerd's own start as the hello-world row shows it.
 */
import fs from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { bundleWorker, startWorkerServer } from "../tools/serve-worker/serve.mjs";
import { rawFetch } from "./roundTrips";
import { ROOT } from "./stack";
import { ms, percentile } from "./stats";

const HELLO_DIR = path.join(ROOT, "bench/helloWorker");

export interface ShippedRow {
  label: string;
  rawBytes: number;
  gzipBytes: number;
  /** Milliseconds from starting workerd to the first answer's end, one per start. */
  coldStartsMs: number[];
}

interface Target {
  label: string;
  projectDir: string;
  /** What the first request asks: a route that needs no store. */
  firstPath: string;
  vars: Record<string, string>;
}

async function bundleSize(projectDir: string): Promise<{ rawBytes: number; gzipBytes: number }> {
  const bundle = await bundleWorker(projectDir);
  const bytes = Buffer.concat(bundle.modules.map((m) => fs.readFileSync(path.join(bundle.outDir, m.name))));
  return { rawBytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length };
}

async function coldStart(target: Target): Promise<number> {
  const t0 = performance.now();
  const server = await startWorkerServer({ vars: target.vars, projectDir: target.projectDir, engine: "workerd" });
  try {
    const res = await rawFetch(`${server.url}${target.firstPath}`, { signal: AbortSignal.timeout(10_000) });
    await res.text();
    if (res.status >= 500) throw new Error(`${target.label}: ${target.firstPath} answered ${res.status}`);
    return performance.now() - t0;
  } finally {
    await server.stop();
  }
}

/** `starts` cold starts of each, taking turns, after each bundle is built (bundling is not counted). */
export async function measureShippedWorker(starts: number, apiKey: string): Promise<ShippedRow[]> {
  const targets: Target[] = [
    { label: "hello-world Worker (bench/helloWorker)", projectDir: HELLO_DIR, firstPath: "/", vars: {} },
    // The Durable store: the first request needs no Redis, so only our code's start is timed.
    { label: "holdfast Worker (GET /healthz, Durable store)", projectDir: ROOT, firstPath: "/healthz", vars: { API_KEYS: `bench=${apiKey}` } },
  ];
  const rows: ShippedRow[] = [];
  for (const t of targets) rows.push({ label: t.label, ...(await bundleSize(t.projectDir)), coldStartsMs: [] });
  for (let i = 0; i < starts; i++) {
    for (const [j, t] of targets.entries()) rows[j].coldStartsMs.push(await coldStart(t));
  }
  return rows;
}

export const SHIPPED_HEADER = ["Worker", "bundle KiB", "gzip KiB", "cold start p50 ms", "min", "max"];

export function shippedTableRows(rows: ShippedRow[]): string[][] {
  const kib = (n: number) => (n / 1024).toFixed(1);
  return rows.map((r) => [
    r.label,
    kib(r.rawBytes),
    kib(r.gzipBytes),
    ms(percentile(r.coldStartsMs, 50)),
    ms(Math.min(...r.coldStartsMs)),
    ms(Math.max(...r.coldStartsMs)),
  ]);
}
