/**
 * Locks this isolate saw contended a moment ago, by store, kind, namespace and
 * name. A waiting acquire normally tries the store first (uncontended: one
 * round trip, no object call), but on a lock that was busy a moment ago that
 * try would only answer busy and cost an Upstash command per grant, so a kind
 * that asks for it (`lineFirst`: leases.ts) goes straight to the lock object's
 * line. A hint only: either path is correct.
 */
const REMEMBER_MS = 2000;
const MAX_ENTRIES = 1000;
const contendedUntil = new Map<string, number>();

export function sawContended(key: string): void {
  if (contendedUntil.size >= MAX_ENTRIES) {
    const now = Date.now();
    for (const [k, until] of contendedUntil) if (until <= now || contendedUntil.size >= MAX_ENTRIES) contendedUntil.delete(k);
  }
  contendedUntil.set(key, Date.now() + REMEMBER_MS);
}

export function recentlyContended(key: string): boolean {
  const until = contendedUntil.get(key);
  if (until === undefined) return false;
  if (until > Date.now()) return true;
  contendedUntil.delete(key);
  return false;
}
