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
import type { KindName, KindOps } from "../kinds/registry/ops.js";
import { KIND_NOUNS } from "../wire/kindNames.js";
import type { OperatorOps } from "./OperatorOps.js";

export type { KindName, KindOps };
export type { LockRef } from "./LockRef.js";

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
  if (!ops) throw new NotSupportedError(`${store.offers ?? "this store offers other kinds"}, not ${KIND_NOUNS[kind]} (see docs/guarantees.md)`);
  return ops;
}

/** The store's listing and audit log, or NotSupportedError (HTTP 501) where it has none (a quorum). */
export function operatorOps(store: LockStore): OperatorOps {
  if (!store.operator) throw new NotSupportedError(`${store.offers ?? "this store"} keeps no listing or audit log (see docs/guarantees.md)`);
  return store.operator;
}
