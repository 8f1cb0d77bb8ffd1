import type { KindKey, KindName, OpsOf } from "../kinds.js";
import type { LockRef } from "../types.js";
import type { ScriptRunner } from "./ScriptRunner.js";

/**
 * What a kind brings to the Redis store (src/kinds/<kind>/redis<Kind>.ts): its
 * scripts and its keys. The Redis store is handed a list of them (the library's,
 * src/library/kinds.ts, or the Worker's, src/worker/kinds.ts) and names no kind.
 */
export interface RedisKind<K extends KindKey = KindKey> {
  readonly name: K["name"];
  readonly redis: {
    /** Its operations, its scripts run through one runner. */
    ops(scripts: ScriptRunner): OpsOf<K>;
    /** Its main key, the one that exists while a lock is held or waited on (or a key stored; a mutex's outlives its lease): listing scans these. */
    mainKey(ref: LockRef): string;
    /** Its watchers key: exists while the lock object has watch sockets (markWatchers). */
    watcherKey(ref: LockRef): string;
  };
}

/** The Redis store's kinds by name (built once from the list it is handed). */
export type RedisKinds = ReadonlyMap<KindName, RedisKind["redis"]>;

export function redisKindsOf(list: readonly RedisKind[]): RedisKinds {
  return new Map(list.map((k) => [k.name, k.redis]));
}

/** The Redis store built from the list `L`: one member per kind of it, named by the kind (`store.mutex`). */
export type RedisStoreOf<L extends readonly RedisKind[], Core> = Core & {
  readonly [K in L[number] as K["name"]]: ReturnType<K["redis"]["ops"]>;
};
