import type { idempotent, senders } from "../../src/index";

export interface CasesInput {
  /** The package's idempotent and senders, as the runtime imports them. */
  idempotent: typeof idempotent;
  senders: typeof senders;
  /** The keys' backend: `{ redis }` or `{ client }`. */
  keys: Record<string, unknown>;
}

/** Runs the shared cases; answers what a user would see of each. */
export function runCases(input: CasesInput): Promise<Record<string, unknown>>;

/** What every runtime, on either backend, must see. */
export const EXPECTED: Record<string, unknown>;
