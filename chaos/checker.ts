/**
 * Reads a history and the resource's log and says what happened: grants,
 * overlapping holds, fences that went backwards or repeated, writes the
 * resource refused or accepted out of order, 503s and hung requests.
 *
 * A hold runs from its grant to its release, or to the end of its lease as
 * the store last said it (expiresAt, moved by heartbeats).
 * - Overlap, by the store's own expiresAt: B was granted at a store time
 *   (B.expiresAt - B.ttlMs) before A's lease ended there, and A had not even
 *   asked to release by the time B's grant came back. That order can be
 *   explained by no sequence of store operations: two holders at once.
 * - Overlap, as the clients saw it: B's grant came back while A still held
 *   by its own clock (A's acquire or last confirmed heartbeat was sent less
 *   than a TTL before, and A had not asked to release). A store whose clock
 *   jumps forward ends leases early without any overlap in its own time;
 *   this column shows what the holders lived through. Fences at the
 *   resource are what protect them then.
 */
import type { Write } from "./fencedResource";
import type { History, Op, Outcome } from "./history";

export interface Report {
  grants: number;
  /** The longest time between two grants coming back (or the run's start or end): how long the lock stood still. */
  longestGapMs: number;
  overlaps: number;
  overlapMaxMs: number;
  clientOverlaps: number;
  clientOverlapMaxMs: number;
  fenceBackwards: number;
  fenceRepeats: number;
  writesAccepted: number;
  writesRefused: number;
  acceptedOutOfOrder: number;
  unavailable: number;
  unavailableP99Ms: number;
  errors: number;
  firstError?: string;
  hung: number;
}

interface Hold {
  client: number;
  token: string;
  fence: number;
  /** Store time of the grant and of the lease's last known end. */
  storeStart: number;
  storeEnd: number;
  /** Suite time the grant came back. */
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
  for (const b of holds) {
    for (const a of holds) {
      if (a === b || a.grantedAt > b.grantedAt) continue;
      if (a.releaseAskedAt <= b.grantedAt) continue; // A may have released first: a legal order
      if (b.storeStart < a.storeEnd && a.storeStart < b.storeEnd) {
        overlaps++;
        overlapMaxMs = Math.max(overlapMaxMs, Math.min(a.storeEnd, b.storeEnd) - b.storeStart);
      }
      const aHeldUntil = Math.min(a.clientEnd, a.releaseAskedAt);
      if (b.grantedAt < aHeldUntil) {
        clientOverlaps++;
        clientOverlapMaxMs = Math.max(clientOverlapMaxMs, aHeldUntil - b.grantedAt);
      }
    }
  }

  // Fences in real-time order: a grant asked for after another came back must have a larger fence.
  const grants = holds.map((h) => ({ ...h, invokedAt: grantOp(history.ops, h.token)?.invokedAt ?? h.grantedAt }));
  let fenceBackwards = 0;
  let fenceRepeats = 0;
  for (const b of grants) {
    const before = grants.filter((a) => a.token !== b.token && a.grantedAt < b.invokedAt);
    if (before.some((a) => a.fence > b.fence)) fenceBackwards++;
    else if (before.some((a) => a.fence === b.fence)) fenceRepeats++;
  }

  let highest = 0;
  let acceptedOutOfOrder = 0;
  for (const w of writes.filter((w) => w.accepted)) {
    if (w.fence < highest) acceptedOutOfOrder++;
    highest = Math.max(highest, w.fence);
  }

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
    clientOverlaps,
    clientOverlapMaxMs,
    fenceBackwards,
    fenceRepeats,
    writesAccepted: writes.filter((w) => w.accepted).length,
    writesRefused: writes.filter((w) => !w.accepted).length,
    acceptedOutOfOrder,
    unavailable: unavailable.length,
    unavailableP99Ms: p99(unavailable.map((o) => o.completedAt - o.invokedAt)),
    errors: errors.length,
    firstError: errors[0] && (errors[0].outcome as { message: string }).message,
    hung: failed("hung").length,
  };
}

function grantOp(ops: Op[], token: string): Op | undefined {
  return ops.find((o) => o.op === "acquire" && o.outcome.kind === "granted" && o.outcome.token === token);
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
        storeStart: g.expiresAt - g.ttlMs,
        storeEnd: g.expiresAt,
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
