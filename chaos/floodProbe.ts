/**
 * The flood rows' probe (flood.ts): the other namespace ("chaos"), a
 * try-lock (waitMs 0) and its release every PROBE_EVERY_MS, timed together,
 * open-loop (sent on time whether or not the last one was answered), so a
 * stall shows as many slow answers rather than as few samples.
 */
import { API_KEY } from "./lab";
import { now, sleep } from "./time";

const PROBE_EVERY_MS = 20;
/** The probe's lock names, reused in turn: a name comes back after NAMES x PROBE_EVERY_MS, long after its release. */
const PROBE_NAMES = 64;
/**
 * Before the unloaded window, the probe warms up for longer than one pass over its names: each name's first use
 * makes its lock object, which costs far more than a call to one that exists, and would inflate the unloaded p99
 * (and so shrink every ratio to it).
 */
export const WARM_UP_MS = PROBE_NAMES * PROBE_EVERY_MS + 500;
/** A probe request unanswered after this counts as failed (unless the window says otherwise). */
const PROBE_TIMEOUT_MS = 10_000;
/** Recovery is judged on windows of this many probes (their median). */
const RECOVERY_WINDOW = 10;

/** The other namespace's try-lock + release over one window. */
export interface Probe {
  /** A request unanswered after this many ms counted as failed (its wait as its latency). */
  timeoutMs: number;
  sent: number;
  answered: number;
  p50: number;
  p99: number;
  fiveXx: number;
  /** Other failures: a 4xx but 409 locked, no answer within PROBE_TIMEOUT_MS (its wait counts as its latency), a broken connection. */
  failed: number;
  firstFailure?: string;
  /** Each cycle: when it was sent (ms, this process's clock) and how long it took. */
  samples: { at: number; ms: number }[];
}

/**
 * How long a probe window runs: `forMs`; or at least `minMs` and until `until` says so (its samples so far), at most
 * `maxMs`. `timeoutMs`: when a request counts as unanswered (default 10 s).
 */
export type ProbeWindow = ({ forMs: number } | { minMs: number; maxMs: number; until: (p: Probe, unanswered: readonly number[]) => boolean }) & {
  timeoutMs?: number;
};

/** The probe at `url` for one window (names `prefix`-0...). */
export async function probe(url: string, prefix: string, window: ProbeWindow): Promise<Probe> {
  const timeoutMs = window.timeoutMs ?? PROBE_TIMEOUT_MS;
  const result: Probe = { timeoutMs, sent: 0, answered: 0, p50: Number.NaN, p99: Number.NaN, fiveXx: 0, failed: 0, samples: [] };
  /** When each unanswered probe was sent. */
  const unanswered = new Set<number>();
  const fail = (what: string) => {
    result.failed++;
    result.firstFailure ??= what;
  };
  const call = async (name: string, op: string, body: unknown) => {
    const res = await fetch(`${url}/v1/locks/${encodeURIComponent(name)}/${op}`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const json = (await res.json().catch(() => ({}))) as { token?: string; error?: string };
    if (res.status >= 500) result.fiveXx++;
    else if (res.status !== 200 && res.status !== 409) fail(`${op} ${res.status} ${json.error}`);
    return { status: res.status, json };
  };
  const attempt = async (i: number) => {
    const name = `${prefix}-${i % PROBE_NAMES}`;
    const t0 = now();
    unanswered.add(t0);
    try {
      const acquired = await call(name, "acquire", { ttlMs: 5000, waitMs: 0 });
      if (acquired.status === 200) await call(name, "release", { token: acquired.json.token });
      result.samples.push({ at: t0, ms: now() - t0 });
      result.answered++;
    } catch (err) {
      // Unanswered: it waited at least this long, which the p50 must see (else a stall would shrink to no samples).
      if (err instanceof Error && err.name === "TimeoutError") result.samples.push({ at: t0, ms: now() - t0 });
      fail(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    } finally {
      unanswered.delete(t0);
    }
  };
  const inFlight: Promise<void>[] = [];
  const start = now();
  const over = (elapsed: number) => {
    if ("forMs" in window) return elapsed >= window.forMs;
    return elapsed >= window.maxMs || (elapsed >= window.minMs && window.until(result, [...unanswered]));
  };
  for (let i = 0; !over(i * PROBE_EVERY_MS); i++) {
    await sleep(Math.max(0, start + i * PROBE_EVERY_MS - now()));
    result.sent++;
    inFlight.push(attempt(i));
  }
  await Promise.all(inFlight);
  const latencies = result.samples.map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  result.p50 = at(0.5);
  result.p99 = at(0.99);
  return result;
}

/**
 * From `since` to the first window of RECOVERY_WINDOW probes (in the order sent) whose median is at most `bound`
 * ms, and before which no probe is still unanswered (a slow one would come in ahead of it); undefined: none yet.
 */
export function recoveryOf(p: Probe, unanswered: readonly number[], bound: number, since: number): number | undefined {
  const samples = [...p.samples].sort((a, b) => a.at - b.at);
  const oldestUnanswered = Math.min(...unanswered);
  for (let i = 0; i + RECOVERY_WINDOW <= samples.length; i++) {
    const window = samples.slice(i, i + RECOVERY_WINDOW);
    if (window[RECOVERY_WINDOW - 1].at > oldestUnanswered) return undefined;
    const median = window.map((s) => s.ms).sort((a, b) => a - b)[Math.floor(RECOVERY_WINDOW / 2)];
    if (median <= bound) return Math.max(0, samples[i].at - since);
  }
  return undefined;
}
