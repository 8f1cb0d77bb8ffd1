/**
 * Reads a history and the resource's log and says what happened: grants,
 * overlapping holds, fences that went backwards or repeated, writes the
 * resource refused, stale writes it accepted, 503s and hung requests.
 *
 * A hold runs from its grant to its release, or to the end of its lease as
 * the store last said it (expiresAt, moved by heartbeats). Pairs of holds are
 * read in whatever order their answers came back.
 * - Overlap, by the store's own times: the later grant in store time
 *   (expiresAt - ttlMs) came before the earlier one's lease ended there,
 *   and the earlier holder had not even asked to release by the time the
 *   later grant came back. That can be explained by no sequence of store
 *   operations: two holders at once.
 * - Where store time cannot tell: a grant asked for after another grant came
 *   back, yet stamped earlier in store time (the store's clock went back
 *   between them). Such a pair counts as an overlap when the clients' views
 *   below overlap.
 * - Overlap, as the clients saw it: both held at once by their own clocks
 *   (a hold runs from its answer to the earlier of its release request and
 *   its acquire's or last confirmed heartbeat's send time plus its TTL). A
 *   store whose clock jumps forward ends leases early with no overlap in its
 *   own time; this column shows what the holders lived through then, and
 *   fences at the resource are what protect them.
 * - Stale writes accepted: a write the resource took from a holder whose
 *   fence is below that of a grant that had already come back when the write
 *   was sent. A grant comes back only once its fence has claimed the
 *   resources (claim on grant), so each such write is one the resource should
 *   have refused. Counted per resource, as is:
 * - Accepted out of fence order: in the order the resource applied them, an
 *   accepted write whose fence is below one it had accepted before.
 */
import type { Write } from "./fencedResource";
import type { History, Op, Outcome } from "./history";

export interface Report {
  grants: number;
  /** The longest time between two grants coming back (or the run's start or end): how long the lock stood still. */
  longestGapMs: number;
  overlaps: number;
  overlapMaxMs: number;
  /** The first overlapping pair, as the history has it, for the run's notes. */
  firstOverlap?: string;
  clientOverlaps: number;
  clientOverlapMaxMs: number;
  fenceBackwards: number;
  fenceRepeats: number;
  writesAccepted: number;
  writesRefused: number;
  /** Accepted writes whose fence is below that of a grant already answered when they were sent. */
  staleWritesAccepted: number;
  acceptedOutOfOrder: number;
  /** The four write counts above, for each resource on its own (the key: Write.resource, "" when unnamed); the totals are their sums. */
  resources: Record<string, WriteCounts>;
  unavailable: number;
  unavailableP99Ms: number;
  errors: number;
  firstError?: string;
  hung: number;
}

type WriteCounts = Pick<Report, "writesAccepted" | "writesRefused" | "staleWritesAccepted" | "acceptedOutOfOrder">;

interface Hold {
  client: number;
  token: string;
  fence: number;
  /** Store time of the grant and of the lease's last known end. */
  storeStart: number;
  storeEnd: number;
  /** Suite time the acquire was sent, and the time its grant came back. */
  invokedAt: number;
  grantedAt: number;
  /** Suite time the holder's own deadline ends (last confirmed send + TTL). */
  clientEnd: number;
  /** Suite time the holder asked to release (Infinity: never did). */
  releaseAskedAt: number;
}

/** `window`: the run's start and end (suite time), so a lock that stood still until the end counts too. */
export function check(history: History, writes: Write[], window?: { start: number; end: number }): Report {
  const holds = holdsOf(history.ops);
  let overlaps = 0;
  let overlapMaxMs = 0;
  let clientOverlaps = 0;
  let clientOverlapMaxMs = 0;
  let firstOverlap: string | undefined;
  for (const [i, a] of holds.entries()) {
    for (const b of holds.slice(i + 1)) {
      const clientOverlapMs = clientViewOverlapMs(a, b);
      if (clientOverlapMs > 0) {
        clientOverlaps++;
        clientOverlapMaxMs = Math.max(clientOverlapMaxMs, clientOverlapMs);
      }
      if (!storeTimeTells(a, b)) {
        if (clientOverlapMs > 0) {
          overlaps++;
          overlapMaxMs = Math.max(overlapMaxMs, clientOverlapMs);
          firstOverlap ??= `by the clients' view (store time cannot tell): ${describe(a)}; ${describe(b)}`;
        }
        continue;
      }
      const [first, second] = a.storeStart <= b.storeStart ? [a, b] : [b, a];
      if (first.releaseAskedAt <= second.grantedAt) continue; // the first may have released before: a legal order
      if (second.storeStart < first.storeEnd) {
        firstOverlap ??= `in store time: ${describe(first)}; ${describe(second)}`;
        overlaps++;
        overlapMaxMs = Math.max(overlapMaxMs, Math.min(first.storeEnd, second.storeEnd) - second.storeStart);
      }
    }
  }

  // Fences in real-time order: a grant asked for after another came back must have a larger fence.
  const grants = holds;
  let fenceBackwards = 0;
  let fenceRepeats = 0;
  for (const b of grants) {
    const before = grants.filter((a) => a.token !== b.token && a.grantedAt < b.invokedAt);
    if (before.some((a) => a.fence > b.fence)) fenceBackwards++;
    else if (before.some((a) => a.fence === b.fence)) fenceRepeats++;
  }

  const resources: Record<string, WriteCounts> = {};
  for (const name of new Set(writes.map((w) => w.resource ?? ""))) {
    resources[name] = countWrites(
      holds,
      writes.filter((w) => (w.resource ?? "") === name),
    );
  }
  const sum = (k: keyof WriteCounts) => Object.values(resources).reduce((n, c) => n + c[k], 0);

  const failed = (kind: Outcome["kind"]) => history.ops.filter((o) => o.outcome.kind === kind);
  const unavailable = failed("unavailable");
  const errors = failed("error");
  const grantTimes = [...(window ? [window.start] : []), ...holds.map((h) => h.grantedAt).sort((a, b) => a - b), ...(window ? [window.end] : [])];
  const longestGapMs = grantTimes.reduce((gap, t, i) => (i ? Math.max(gap, t - grantTimes[i - 1]) : gap), 0);
  return {
    grants: holds.length,
    longestGapMs,
    overlaps,
    overlapMaxMs,
    firstOverlap,
    clientOverlaps,
    clientOverlapMaxMs,
    fenceBackwards,
    fenceRepeats,
    writesAccepted: sum("writesAccepted"),
    writesRefused: sum("writesRefused"),
    staleWritesAccepted: sum("staleWritesAccepted"),
    acceptedOutOfOrder: sum("acceptedOutOfOrder"),
    resources,
    unavailable: unavailable.length,
    unavailableP99Ms: p99(unavailable.map((o) => o.completedAt - o.invokedAt)),
    errors: errors.length,
    firstError: errors[0] && (errors[0].outcome as { message: string }).message,
    hung: failed("hung").length,
  };
}

/**
 * One resource's writes, in the order it applied them: accepted below a fence
 * it had already accepted (out of order), and accepted from a holder whose
 * fence is below that of a grant already answered when the write was sent
 * (stale: with claim on grant, that grant's fence had reached the resource).
 */
function countWrites(holds: Hold[], writes: Write[]): WriteCounts {
  let highest = 0;
  let acceptedOutOfOrder = 0;
  const accepted = writes.filter((w) => w.accepted);
  for (const w of accepted) {
    if (w.fence < highest) acceptedOutOfOrder++;
    highest = Math.max(highest, w.fence);
  }
  return {
    writesAccepted: accepted.length,
    writesRefused: writes.length - accepted.length,
    staleWritesAccepted: accepted.filter((w) => holds.some((h) => h.fence > w.fence && h.grantedAt < w.at)).length,
    acceptedOutOfOrder,
  };
}

/** What holds under every fault, and without data loss. */
export function promisesBroken(r: Report, dataLoss: boolean): string[] {
  const out: string[] = [];
  for (const [name, w] of Object.entries(r.resources)) {
    const at = name ? ` by ${name}` : "";
    if (w.staleWritesAccepted)
      out.push(`${w.staleWritesAccepted} stale writes accepted${at} (from a holder whose fence was below an answered grant's)`);
    if (w.acceptedOutOfOrder) out.push(`${w.acceptedOutOfOrder} writes accepted out of fence order${at}`);
  }
  if (r.fenceBackwards) out.push(`${r.fenceBackwards} fences went backwards`);
  if (r.fenceRepeats) out.push(`${r.fenceRepeats} fences repeated`);
  if (!dataLoss && r.overlaps) out.push(`${r.overlaps} overlapping holds without data loss`);
  if (r.hung) out.push(`${r.hung} requests hung`);
  if (r.grants === 0) out.push("no grant at all");
  return out;
}

function describe(h: Hold): string {
  const end = Number.isFinite(h.releaseAskedAt) ? `release asked ${Math.round(h.releaseAskedAt)}` : "never released";
  return `client ${h.client} fence ${h.fence}: asked ${Math.round(h.invokedAt)}, granted ${Math.round(h.grantedAt)}, store ${h.storeStart}..${h.storeEnd}, ${end}, own deadline ${Math.round(h.clientEnd)}`;
}

/** How long two holds overlapped by their holders' own clocks (0: not at all). */
function clientViewOverlapMs(a: Hold, b: Hold): number {
  const end = (h: Hold) => Math.min(h.clientEnd, h.releaseAskedAt);
  return Math.max(0, Math.min(end(a), end(b)) - Math.max(a.grantedAt, b.grantedAt));
}

/**
 * Whether the store's times can order two holds: not when one was asked for
 * after the other's grant came back and yet stamped earlier (its clock went
 * back in between).
 */
function storeTimeTells(a: Hold, b: Hold): boolean {
  const [earlier, later] = a.grantedAt <= b.grantedAt ? [a, b] : [b, a];
  return !(later.invokedAt > earlier.grantedAt && later.storeStart < earlier.storeStart);
}

function holdsOf(ops: Op[]): Hold[] {
  const holds = new Map<string, Hold>();
  for (const o of ops) {
    if (o.op === "acquire" && o.outcome.kind === "granted") {
      const g = o.outcome;
      holds.set(g.token, {
        client: o.client,
        token: g.token,
        fence: g.fence,
        storeStart: g.storeStart ?? g.expiresAt - g.ttlMs,
        storeEnd: g.expiresAt,
        invokedAt: o.invokedAt,
        grantedAt: o.completedAt,
        clientEnd: o.invokedAt + g.ttlMs,
        releaseAskedAt: Number.POSITIVE_INFINITY,
      });
    }
  }
  for (const o of ops) {
    const h = o.token === undefined ? undefined : holds.get(o.token);
    if (!h) continue;
    if (o.op === "heartbeat" && o.outcome.kind === "ok") {
      if (o.outcome.expiresAt !== undefined) h.storeEnd = Math.max(h.storeEnd, o.outcome.expiresAt);
      if (o.outcome.ttlMs !== undefined) h.clientEnd = Math.max(h.clientEnd, o.invokedAt + o.outcome.ttlMs);
    }
    if (o.op === "release") h.releaseAskedAt = Math.min(h.releaseAskedAt, o.invokedAt);
  }
  return [...holds.values()];
}

function p99(values: number[]): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
}
