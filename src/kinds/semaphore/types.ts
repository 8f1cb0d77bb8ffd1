import { kindKey } from "../../store/kinds.js";
import type { SemaphoreWait } from "./wait.js";
import type { LockRef } from "../../store/types.js";
import type { Admitted, HolderBusy, HolderLeaseInput, HolderOps, QueuedHolder } from "../manyHolders/types.js";
import type { AnsweredWrite } from "../../store/types.js";

/** What both stores do for the counting semaphore; its conformance cases hold them to the same behaviour. */

export interface SemaphoreGrant {
  name: string;
  token: string;
  permits: number;
  limit: number;
  fence: number;
  ttlMs: number;
  expiresAt: number;
  /** Permits left after this grant. */
  available: number;
}

export interface SemaphoreAcquireInput extends HolderLeaseInput {
  limit: number;
  permits: number;
}

export type SemaphoreAcquireResult =
  | { status: "granted"; grant: SemaphoreGrant }
  | HolderBusy
  /** Holders exist with another limit. */
  | { status: "limit_mismatch"; limit: number };

export interface SemaphoreQueuedHolder extends QueuedHolder {
  limit: number;
  permits: number;
}

export type SemaphoreReleaseResult = { status: "ok"; permits: number; available: number; watched: boolean; waiters: boolean } | { status: "lost" };

export interface SemaphoreState {
  /** The holders' limit; null when nobody holds (the next acquire sets it). */
  limit: number | null;
  used: number;
  holders: number;
  /** The labels of the first holders to end (at most 10; holders without one left out). */
  holderLabels: string[];
  /** When the first holder's lease ends (null when nobody holds). */
  expiresAt: number | null;
}

/** Heartbeat, withdraw, watch and ungate are the many-holder kinds' own (HolderOps). */
export interface SemaphoreOps extends HolderOps {
  acquire(ref: LockRef, input: SemaphoreAcquireInput): Promise<SemaphoreAcquireResult>;
  admit(ref: LockRef, waiters: SemaphoreQueuedHolder[], more: boolean): Promise<Admitted<SemaphoreGrant>>;
  release(ref: LockRef, input: { token: string } & AnsweredWrite): Promise<SemaphoreReleaseResult>;
  inspect(ref: LockRef): Promise<SemaphoreState>;
}

import type { HolderWriteNote as SemaphoreWriteNote } from "../manyHolders/types.js";

/** The semaphore's name, carrying the types of its store operations, its wait request and its write notes. */
export const SEMAPHORE = kindKey<SemaphoreOps, SemaphoreWait, SemaphoreWriteNote>()("semaphore");
