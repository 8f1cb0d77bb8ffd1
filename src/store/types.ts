/**
 * The store interface, composed per lock kind: each kind's operations
 * (src/kinds/<kind>/types.ts) are one member of the store, named by the kind,
 * for the kinds of the list the store was built from (StoreOf).
 * RedisStore runs the kinds' Lua scripts through Upstash; DurableStore runs
 * the same rules inside each lock's LockObject; both have every kind and pass
 * one conformance suite. A store without a kind (a quorum of databases has fewer)
 * leaves it out of its type, and `kindOps` answers NotSupportedError (501) for
 * it, in one place. Outcomes a caller must branch on are results, not
 * exceptions; a store that does not answer throws StoreUnavailableError, a bug
 * InternalError.
 */
import { NotSupportedError } from "../errors.js";
import type { KindKey, KindName, OpsOf } from "./kinds.js";
import type { OperatorOps } from "./OperatorOps.js";

export type { KindName };

export interface StoreCore {
  /** Where the state lives: Redis (outside the lock objects), or the lock objects themselves. */
  readonly kind: "redis" | "durable";
  /** Resolves when the store answers; throws StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  /** What the store offers, said in a 501 for a kind it leaves out (see QuorumStore). */
  readonly offers?: string;
  /** Listing and the audit log (absent on a quorum: operatorOps answers 501). */
  readonly operator?: OperatorOps;
}

/**
 * A store as the core holds it. Its kinds' operations are members named by
 * the kinds, read with kindOps; which members it has is its list's to say
 * (StoreOf), not the core's.
 */
export type LockStore = StoreCore;

/** A kind as a store is built from it: its name and its operations there. */
export interface StoreKind<N extends string = string, Ops = unknown> {
  readonly name: N;
  readonly ops: Ops;
}

/**
 * A store built from a list of kinds: one member per kind of the list, named
 * by it (`store.mutex.acquire(...)`). A kind left off the list is no member,
 * so a use of it is a type error.
 */
export type StoreOf<L extends readonly StoreKind[], Core extends StoreCore = StoreCore> = Core & {
  readonly [K in L[number] as K["name"]]: K["ops"];
};

/**
 * The store `core` with the kinds' operations as members: the one place the
 * kinds' members are added (they are known only from the list, at run time).
 */
export function withKinds<Core extends StoreCore, const L extends readonly StoreKind[]>(core: Core, kinds: L): StoreOf<L, Core> {
  for (const kind of kinds) Object.assign(core, { [kind.name]: kind.ops });
  return core as StoreOf<L, Core>;
}

/**
 * A kind's operations on this store, or NotSupportedError (HTTP 501) when the store leaves the kind out:
 * typed by the kind's key where the kind asks, of no type the core knows where the core asks by name.
 */
export function kindOps<K extends KindKey>(store: LockStore, kind: K): OpsOf<K>;
export function kindOps(store: LockStore, kind: KindName): unknown;
export function kindOps(store: LockStore, kind: KindKey | KindName): unknown {
  const name = typeof kind === "string" ? kind : kind.name;
  const ops: unknown = Reflect.get(store, name);
  if (!ops) throw new NotSupportedError(`${store.offers ?? "this store offers other kinds"}, not ${name} (see docs/guarantees.md)`);
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
