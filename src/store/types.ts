/**
 * The store interface, composed per lock kind: each kind's operations
 * (src/kinds/<kind>/types.ts) are one member of the store, named by the kind.
 * RedisStore runs the kinds' Lua scripts through Upstash; DurableStore runs
 * the same rules inside each lock's LockObject; both have every kind and pass
 * one conformance suite. A store without a kind (a quorum of databases has fewer)
 * leaves it out of its type, and `kindOps` answers NotSupportedError (501) for
 * it, in one place. Outcomes a caller must branch on are results, not
 * exceptions; a store that does not answer throws StoreUnavailableError, a bug
 * InternalError.
 */
import { NotSupportedError } from "../errors.js";
import type { KindName, KindOps } from "./kinds.js";
import type { OperatorOps } from "./OperatorOps.js";

export type { KindName, KindOps };

interface StoreCore {
  /** Where the state lives: Redis (outside the lock objects), or the lock objects themselves. */
  readonly kind: "redis" | "durable";
  /** Resolves when the store answers; throws StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  /** What the store offers, said in a 501 for a kind it leaves out (see QuorumStore). */
  readonly offers?: string;
  /** Listing and the audit log (absent on a quorum: operatorOps answers 501). */
  readonly operator?: OperatorOps;
}

/** A store: the kinds it has (see kindOps). */
export type LockStore = StoreCore & { readonly [K in KindName]?: KindOps[K] };

/** A store with every kind (Redis, Durable). */
export type EveryKindStore = StoreCore & { readonly [K in KindName]: KindOps[K] };

/** A kind's operations on this store, or NotSupportedError (HTTP 501) when the store leaves the kind out. */
export function kindOps<K extends KindName>(store: LockStore, kind: K): KindOps[K] {
  const ops = store[kind] as KindOps[K] | undefined;
  if (!ops) throw new NotSupportedError(`${store.offers ?? "this store offers other kinds"}, not ${kind} (see docs/guarantees.md)`);
  return ops;
}

/** The store's listing and audit log, or NotSupportedError (HTTP 501) where it has none (a quorum). */
export function operatorOps(store: LockStore): OperatorOps {
  if (!store.operator) throw new NotSupportedError(`${store.offers ?? "this store"} keeps no listing or audit log (see docs/guarantees.md)`);
  return store.operator;
}

/** A lock's identity: names live inside the namespace of the API key. */
export interface LockRef {
  ns: string;
  name: string;
}

/**
 * Why a waiter's token is withdrawn, which says what the store may take back:
 * - "left": it left the line (its wait ran out, its client went away) before
 *   any grant reached it. Nobody else knows its token, so whatever the store
 *   holds for it is taken back, picked-up mark or not (a waiter granted on
 *   arrival has no mark).
 * - "unclaimed": its grant was answered but not picked up in time. Its client
 *   may yet show a sign of life, so the grant is taken back only while the
 *   store still marks it not picked up.
 */
export type WithdrawReason = "left" | "unclaimed";

/**
 * How a lease watched for onExpire stands, as its lock object asks at the
 * lease's end: still held (and for how long, as a remaining time), ended on
 * purpose (released, completed, failed: no notification), or lapsed.
 */
export type WatchState = { state: "held"; remainingMs: number; expiresAt: number } | { state: "ended" } | { state: "lapsed" };

/** Which lease a watch is for: its fence, and its holder's token where a kind has many holders (readers share a fence). */
export interface WatchedLeaseId {
  fence: number;
  token?: string;
}

/**
 * A write whose answer the store keeps under its request id (2 minutes), so
 * that a retry of it (the same id) gets the first answer instead of applying
 * twice.
 */
export interface AnsweredWrite {
  requestId: string;
  /**
   * The request id was made for this one call (the client sent no id of its own, or the lock object made
   * it), so no retry can carry it again: the Durable store keeps no answer under it (one storage write less,
   * and no row for the alarm to scan). The Redis scripts keep theirs.
   */
  idUnrepeated?: boolean;
}
