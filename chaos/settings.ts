/** The workload's shape, the same for every run. */
export const TTL_MS = 1000;
export const CLIENTS = 4;
export const HOLD_MS = 200;
export const WRITES_PER_HOLD = 4;
export const WAIT_MS = 300;
/** Each run: this long before the fault, the fault, this long after. */
export const BEFORE_MS = 2500;
export const AFTER_MS = 3000;
