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
  /** Who leads, and the kept changes after position `since` (read-only). */
  observe(ref: LockRef, input: { since: number }): Promise<ElectionView>;
}

/** `position`: the history's last after this proclaim (a new value is appended; the same one again is not). */
export type ProclaimResult = { status: "ok"; fence: number; expiresAt: number; position: number } | { status: "lost" };

/** One change of an election: a new leader (a new term) or its new value, at its position in the history. */
export interface ElectionChange {
  position: number;
  term: number;
  value: string;
  /** When it happened (store ms). */
  at: number;
}

/** How many changes an election's history keeps (the last ones): lua/prelude.lua's history_add. */
export const HISTORY_KEPT = 64;

export interface ElectionView {
  /** The leader now, or null. */
  leader: { term: number; value: string; expiresAt: number } | null;
  /** The history's last position (0: no change yet). */
  position: number;
  /** The oldest position kept (null: none). */
  first: number | null;
  /** The kept changes after `since`, in order. */
  changes: ElectionChange[];
}

/** The election's name, carrying the types of its store operations, its wait request and its write notes (the mutex's). */
export const ELECTION = kindKey<ElectionOps, ElectionWait, MutexWriteNote>()("election");
