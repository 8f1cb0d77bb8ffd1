/**
 * Figure 5: the read-write lock's reason to exist. 16 clients on one lock,
 * each looping: pick read (90 %) or write (10 %), acquire (waiting), hold
 * 5 ms, release. Readers share, so the read-write lock should grant well
 * above the same workload on the mutex, which the 5 ms hold caps at 200/s.
 * And the writers' wait under that steady stream of readers: no starvation
 * means a writer waits about one round of readers, not for the stream to
 * stop.
 */
import { setMaxListeners } from "node:events";
import type { Release, WorkerApi } from "./clients";
import { sleep, withTimeout } from "./loop";
import { int, ms, percentile } from "./stats";

export interface ReadMostlyShape {
  clients: number;
  readShare: number;
  holdMs: number;
  windowMs: number;
}

export interface ReadMostlyRow {
  label: string;
  lock: string;
  grantsPerSec: number;
  readWaits: number[];
  writeWaits: number[];
  errors: number;
  firstError?: string;
}

const WAIT_MS = 30_000;
const DRAIN_MS = 10_000;

type Acquire = (write: boolean, signal: AbortSignal) => Promise<Release | null>;

export function readMostlyTargets(workers: {
  redis: WorkerApi;
  durable: WorkerApi;
}): Array<{ label: string; lock: string; acquire: (name: string) => Acquire }> {
  const targets = [];
  for (const [store, api] of [
    ["Redis", workers.redis],
    ["Durable", workers.durable],
  ] as const) {
    const label = `holdfast Worker API, ${store} store`;
    targets.push({
      label,
      lock: "rwlock",
      acquire:
        (name: string): Acquire =>
        (write, signal) =>
          api.rwAcquire(name, write ? "write" : "read", WAIT_MS, signal),
    });
    targets.push({
      label,
      lock: "mutex (every op)",
      acquire:
        (name: string): Acquire =>
        (_write, signal) =>
          api.acquire(name, WAIT_MS, signal),
    });
  }
  return targets;
}

export async function measureReadMostly(label: string, lock: string, acquire: Acquire, shape: ReadMostlyShape): Promise<ReadMostlyRow> {
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // one signal for every request of the run
  const readWaits: number[] = [];
  const writeWaits: number[] = [];
  let inWindow = 0;
  let errors = 0;
  let firstError: string | undefined;
  // A fixed pattern (every tenth op of a client writes, clients offset) so each row sees the same mix.
  const writeEvery = Math.round(1 / (1 - shape.readShare));
  const t0 = performance.now();
  const end = t0 + shape.windowMs;
  const drain = setTimeout(() => abort.abort(), shape.windowMs + DRAIN_MS);
  await withTimeout(
    Promise.all(
      Array.from({ length: shape.clients }, async (_, i) => {
        for (let op = i; performance.now() < end && errors < 20; op++) {
          const write = op % writeEvery === 0;
          try {
            const sent = performance.now();
            const release = await acquire(write, abort.signal);
            if (!release) continue;
            const granted = performance.now();
            if (granted <= end) {
              inWindow++;
              (write ? writeWaits : readWaits).push(granted - sent);
            }
            await sleep(shape.holdMs);
            await release();
          } catch (err) {
            if (abort.signal.aborted) break;
            errors++;
            firstError ??= err instanceof Error ? err.message : String(err);
          }
        }
      }),
    ),
    shape.windowMs + DRAIN_MS + 10_000,
    `read-mostly run of ${label} ${lock}`,
  ).finally(() => clearTimeout(drain));
  return { label, lock, grantsPerSec: inWindow / (shape.windowMs / 1000), readWaits, writeWaits, errors, firstError };
}

export const READ_MOSTLY_HEADER = [
  "client",
  "lock",
  "grants/s",
  "vs mutex",
  "read wait p50",
  "read wait p99",
  "write wait p50",
  "write wait p99",
  "writes",
];

export function readMostlyTableRows(rows: ReadMostlyRow[]): string[][] {
  return rows.map((r) => {
    const mutex = rows.find((m) => m.label === r.label && m.lock !== "rwlock");
    return [
      r.label,
      r.lock,
      int(r.grantsPerSec),
      r.lock === "rwlock" && mutex ? `${(r.grantsPerSec / mutex.grantsPerSec).toFixed(1)}x` : "—",
      ms(percentile(r.readWaits, 50)),
      ms(percentile(r.readWaits, 99)),
      ms(percentile(r.writeWaits, 50)),
      ms(percentile(r.writeWaits, 99)),
      String(r.writeWaits.length),
    ];
  });
}
