import type { KindName } from "../kinds/registry/ops.js";
import type { LockRef } from "../store/LockRef.js";
import type { LockStore } from "../store/types.js";
import { KIND_NAMES } from "../wire/kindNames.js";

/** The kinds' operations that only read: nothing to tell. */
const READS = new Set(["inspect", "inspectWaiting", "watch"]);
/** Answers of a write that changed the lock (a busy, lost or replayed answer changed nothing). */
const CHANGED = new Set(["granted", "ok", "started"]);
const KINDS = new Set<string>(KIND_NAMES);

/**
 * The Redis store as the Worker's requests use it: after each of its writes
 * that changed a lock, `tell` (the lock object's noteChange, after the
 * answer), so the lock's watch sockets (src/lockObject/LockWatchers.ts) are
 * pushed its new state. One place for every kind's every write. The Durable
 * store's writes run in the lock object, which sees them itself; writes the
 * library makes on Redis directly reach no lock object (docs/API.md, "Watching a lock").
 */
export function noticingChanges(store: LockStore, tell: (kind: KindName, ref: LockRef) => void): LockStore {
  if (store.kind !== "redis") return store;
  const wrapped = new Map<string, unknown>();
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof prop !== "string" || !KINDS.has(prop) || !value) return typeof value === "function" ? value.bind(target) : value;
      if (!wrapped.has(prop)) wrapped.set(prop, telling(prop as KindName, value as object, tell));
      return wrapped.get(prop);
    },
  });
}

function telling(kind: KindName, ops: object, tell: (kind: KindName, ref: LockRef) => void): object {
  return new Proxy(ops, {
    get(target, op) {
      const fn = Reflect.get(target, op, target);
      if (typeof fn !== "function" || typeof op !== "string" || READS.has(op)) return typeof fn === "function" ? fn.bind(target) : fn;
      return async (ref: LockRef, ...rest: unknown[]) => {
        const result = await fn.call(target, ref, ...rest);
        const status = (result as { status?: unknown } | undefined)?.status;
        if (status === undefined || CHANGED.has(String(status))) tell(kind, ref);
        return result;
      };
    },
  });
}
