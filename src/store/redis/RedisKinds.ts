import type { KindName, KindOps } from "../../kinds/registry/ops.js";
import type { LockRef } from "../LockRef.js";
import type { ScriptRunner } from "./ScriptRunner.js";

/** What the Redis store is handed of the kinds (by src/kinds/registry/redisStore.ts): it names none itself. */
export interface RedisKinds {
  /** Each kind's operations, its scripts through one runner. */
  ops(scripts: ScriptRunner): KindOps;
  /** Each kind's main key in Redis, the one that exists while a lock is held (or a key stored). */
  mainKeys: Record<KindName, (ref: LockRef) => string>;
  /** Which keys of a lock (after its main key's closing brace) say a listing shows it. */
  listedSuffixes: Record<KindName, string[]>;
  /** Each kind's watchers key: exists while the lock object has watch sockets (markWatchers). */
  watcherKeys: Record<KindName, (ref: LockRef) => string>;
}
