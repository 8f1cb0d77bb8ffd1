import { kindKey } from "../../store/kinds.js";
import type { RwLockWait } from "./wait.js";
import type { LockRef } from "../../store/types.js";
import type { Admitted, HolderBusy, HolderLeaseInput, HolderOps, QueuedHolder } from "../manyHolders/types.js";
import type { AnsweredWrite } from "../../store/types.js";

/** What both stores do for the read-write lock; its conformance cases hold them to the same behaviour. */

export type RwMode = "read" | "write";

export interface RwGrant {
  name: string;
  token: string;
  mode: RwMode;
  fence: number;
  ttlMs: number;
  expiresAt: number;
  /** This token's holds in this mode (re-entry counts). */
  count: number;
}

/**
 * Its request id: the same on a retry of the same re-entry, which then gets
 * the first answer. Its token: the new holder's, or the held one when
 * re-entering (or a writer taking a read: a downgrade to come); a re-entry's
 * label replaces the holder's.
 */
export interface RwAcquireInput extends AnsweredWrite, HolderLeaseInput {
  mode: RwMode;
  reenter: boolean;
}

export type RwAcquireResult =
  | { status: "granted"; grant: RwGrant }
  | HolderBusy
  | { status: "lost" }
  /** A reader asked for the write lock with its read token: upgrades deadlock, so they are refused. */
  | { status: "upgrade" };

export interface RwQueuedHolder extends QueuedHolder {
  mode: RwMode;
}

export type RwReleaseResult =
  | {
      status: "ok";
      /** This token holds nothing any more. */
      released: boolean;
      mode: RwMode;
      /** Holds left in the released mode. */
      count: number;
      /** The token's lease was watched for onExpire. */
      watched: boolean;
      /** Someone waits in the lock object's line: it must hear of this release. */
      waiters: boolean;
    }
  | { status: "lost" };

export interface RwState {
  mode: "free" | "read" | "write";
  /** Holders with a read hold (a writer that also reads counts once). */
  readers: number;
  writer: boolean;
  /** The fence of the current holders, or the last one issued when free (null if none is remembered). */
  fence: number | null;
  /** The labels of the first holders to end (at most 10; holders without one left out). */
  holderLabels: string[];
  /** When the first holder's lease ends (null when free). */
  expiresAt: number | null;
}

/** A release of one hold of the token's; its request id the same on a retry of it. */
export interface RwReleaseInput extends AnsweredWrite {
  token: string;
  mode: RwMode | "any";
}

/** Heartbeat, withdraw, watch and ungate are the many-holder kinds' own (HolderOps). */
export interface RwLockOps extends HolderOps {
  acquire(ref: LockRef, input: RwAcquireInput): Promise<RwAcquireResult>;
  /** The lock object's step: grant the waiters at the front that can be, in order; register the first that cannot. */
  admit(ref: LockRef, waiters: RwQueuedHolder[], more: boolean): Promise<Admitted<RwGrant>>;
  /** mode "any": the write hold if the token has one, else a read hold. */
  release(ref: LockRef, input: RwReleaseInput): Promise<RwReleaseResult>;
  inspect(ref: LockRef): Promise<RwState>;
}

import type { HolderWriteNote as RwLockWriteNote } from "../manyHolders/types.js";

/** The read-write lock's name, carrying the types of its store operations, its wait request and its write notes. */
export const RWLOCK = kindKey<RwLockOps, RwLockWait, RwLockWriteNote>()("rwlock");
