/** The workload's shape, the same for every run. */
export const TTL_MS = 1000;
export const CLIENTS = 4;
export const HOLD_MS = 200;
export const WRITES_PER_HOLD = 4;
export const WAIT_MS = 300;
/** Each run: this long before the fault, the fault, this long after. */
export const BEFORE_MS = 2500;
export const AFTER_MS = 3000;
/**
 * The quick mode's (`npm run chaos:quick`, in CI) windows. Before: half a TTL, in which the lock has
 * been granted and passed on (holds of HOLD_MS), so the fault finds a holder and clients in line.
 * After: one and a half TTLs, so every lease granted in the fault has ended within the run and an
 * overlap with the next holder, or a stale write past it, shows.
 */
export const QUICK_BEFORE_MS = TTL_MS / 2;
export const QUICK_AFTER_MS = 1.5 * TTL_MS;
