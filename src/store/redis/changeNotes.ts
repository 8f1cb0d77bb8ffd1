import type { KindName } from "../kinds.js";
import type { LockRef, LockStore } from "../types.js";
import { RedisStoreCore } from "./RedisStore.js";
import { foundWatchers } from "./watchedResults.js";

/**
 * Tells a lock's object, after the answer, of a write that changed the lock: its note (noteWrite: the
 * line may move, a watch ends, and its watchers are pushed), or without one noteChange (watchers only).
 */
export type TellChange = (kind: KindName, ref: LockRef, note?: unknown) => void;

/**
 * What the view reads of a kind: its name, and the notes its writes send its lock object, by store
 * operation (the service layer's `writeNotes`, src/service/ServiceKind.ts).
 */
export interface NotingKind {
  readonly name: KindName;
  readonly service: { readonly writeNotes?: object };
}

/** The kinds' operations that only read: nothing to tell. */
const READS = new Set(["inspect", "inspectWaiting", "watch"]);
/** Answers of a write that changed the lock (a busy, lost or replayed answer changed nothing). */
const CHANGED = new Set(["granted", "ok", "started"]);

/**
 * The Redis store as the Worker's requests use it: after a write its kind
 * notes (`service.writeNotes`: a release its lock object must hear of), `tell`
 * with the note (the lock object's noteWrite, after the answer); after any
 * other write whose lock has watch sockets, `tell` without one (noteChange),
 * so they are pushed its new state (src/lockObject/watches/LockWatchers.ts).
 * The object keeps the lock's watchers key in Redis while it has watchers
 * (src/lockObject/sockets/watchMarker.ts); the Worker's writes pass that key, and
 * their scripts answer whether it exists (watchedResults.ts), so a lock that
 * nobody watches costs no object call. On a quorum (no such key on its
 * databases) every write that changed a lock is told. The Durable store's
 * writes run in the lock object, which sees them itself; writes the library
 * makes on Redis reach no lock object (docs/API.md, "Watching a lock").
 *
 * Per request this is two small objects: the kinds' telling operations are
 * made once per isolate and store, and find the request's `tell` on `this`.
 */
export function noticingChanges(store: LockStore, kinds: readonly NotingKind[], tell: TellChange): LockStore {
  if (store.kind !== "redis") return store;
  let proto = viewOf.get(store);
  if (!proto) {
    proto = viewPrototype(store, kinds);
    viewOf.set(store, proto);
  }
  const view = Object.create(proto) as LockStore & Telling;
  view.tell = tell;
  return view;
}

/** What a view (and each kind's operations in it) carries of its request. */
interface Telling {
  tell: TellChange;
}

const viewOf = new WeakMap<LockStore, object>();

/** The store's view, made once: its kinds' operations on the store that notes watchers, each telling after a write. */
function viewPrototype(store: LockStore, kinds: readonly NotingKind[]): object {
  const base: LockStore = store instanceof RedisStoreCore ? store.notingWatchers() : store;
  const told = store instanceof RedisStoreCore ? foundWatchers : (r: unknown) => changed(r);
  const proto: Record<string, unknown> = {};
  for (const key of ["kind", "offers", "operator"] as const) proto[key] = base[key];
  proto.ping = () => base.ping();
  for (const { name: kind, service } of kinds) {
    const ops = Reflect.get(base, kind) as Record<string, unknown> | undefined;
    if (!ops) continue;
    // The core reads a kind's notes by operation name, of no type it knows.
    const opsProto = tellingOps(kind, ops, told, (service.writeNotes ?? {}) as Readonly<Record<string, NoteOfWrite>>);
    const own = `${kind}Ops`;
    Object.defineProperty(proto, kind, {
      get(this: Telling & Record<string, unknown>) {
        if (!this[own]) this[own] = Object.assign(Object.create(opsProto), { tell: this.tell });
        return this[own];
      },
    });
  }
  return proto;
}

/** A write's note, as the core calls it: from its answer, its lock and its input. */
type NoteOfWrite = (result: unknown, ref: LockRef, input: unknown) => unknown;

/** One kind's operations: reads as they are; each write tells its note, or else its change when its result says to. */
function tellingOps(
  kind: KindName,
  ops: Record<string, unknown>,
  told: (result: unknown) => boolean,
  notes: Readonly<Record<string, NoteOfWrite>>,
): object {
  const out: Record<string, unknown> = {};
  for (const op of operationNames(ops)) {
    const fn = ops[op];
    if (typeof fn !== "function") continue;
    if (READS.has(op)) {
      out[op] = fn.bind(ops);
      continue;
    }
    const noteOf = notes[op];
    out[op] = async function (this: Telling, ref: LockRef, ...rest: unknown[]) {
      const result = await fn.call(ops, ref, ...rest);
      const note = noteOf?.(result, ref, rest[0]);
      if (note !== undefined) this.tell(kind, ref, note);
      else if (told(result)) this.tell(kind, ref);
      return result;
    };
  }
  return out;
}

/** The names of a kind's operations: an object literal's own, and a class's on its prototypes too. */
function operationNames(ops: object): Set<string> {
  const names = new Set<string>();
  for (let o: object | null = ops; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) if (name !== "constructor") names.add(name);
  }
  return names;
}

/** A quorum's write that changed the lock: a status among CHANGED, or none (a write with no answer). */
function changed(result: unknown): boolean {
  const status = (result as { status?: unknown } | undefined)?.status;
  return status === undefined || CHANGED.has(String(status));
}
