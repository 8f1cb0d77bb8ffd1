import { kindKey } from "../../store/kinds.js";
import type { LockRef } from "../../store/types.js";
import type { MutexOps, MutexWriteNote } from "../mutex/types.js";
import type { ElectionWait } from "./wait.js";

/**
 * What both stores do for an election (docs/API.md "Elections"). Its rules are
 * the mutex's (campaign = acquire without re-entry, resign = release, the
 * line the mutex's, the term its lease's fence), under the election's own
 * keys and lock objects, with its value kept as the leader's lease label,
 * which the mutex's scripts carry through a handoff in the same step. The one
 * rule of its own: proclaim.
 */
export interface ElectionOps extends MutexOps {
  /** The leader (`token`) sets its value; its term and its lease's end stay. */
  proclaim(ref: LockRef, input: { token: string; value: string }): Promise<ProclaimResult>;
}

export type ProclaimResult = { status: "ok"; fence: number; expiresAt: number } | { status: "lost" };

/** The election's name, carrying the types of its store operations, its wait request and its write notes (the mutex's). */
export const ELECTION = kindKey<ElectionOps, ElectionWait, MutexWriteNote>()("election");
