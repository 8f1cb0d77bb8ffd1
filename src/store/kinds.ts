/**
 * The lock kinds as the core knows them: by name only. Which kinds there are
 * is said once, by each entry point's list (src/worker/kinds.ts,
 * src/library/kinds.ts); the stores' types are inferred from those lists
 * (StoreOf in ./types.ts). The core names no kind and imports none.
 *
 * Where the core's calls are typed by a kind (its store operations, its
 * request to its lock object, what the Worker tells its lock object after a
 * write), the kind names itself with a key that carries those types,
 * `kindKey<MutexOps, MutexWait, MutexWriteNote>()("mutex")`, made once in its
 * own folder: `kindOps(store, MUTEX)` is then typed where the kind uses it,
 * and nothing is merged into the core from outside.
 */

/** A kind's name; also its lock objects' name prefix. */
export type KindName = string;

/** A kind's name, with the types of what it brings carried along (by the type only). */
export interface KindKey<N extends KindName = KindName, Ops = unknown, Wait = unknown, Note = unknown> {
  readonly name: N;
  /** Never set: the types a call typed by this key takes and answers. */
  readonly types?: { ops: Ops; wait: Wait; note: Note };
}

/**
 * A kind's key: its name, typed with its store operations, its wait request and its write notes
 * (given first, then the name: `kindKey<MutexOps, MutexWait, MutexWriteNote>()("mutex")`, so the
 * name's literal type is inferred).
 */
export const kindKey =
  <Ops, Wait = never, Note = never>() =>
  <N extends KindName>(name: N): KindKey<N, Ops, Wait, Note> => ({ name });

export type OpsOf<K> = K extends KindKey<KindName, infer Ops, unknown, unknown> ? Ops : never;
export type WaitOf<K> = K extends KindKey<KindName, unknown, infer Wait, unknown> ? Wait : never;
export type NoteOf<K> = K extends KindKey<KindName, unknown, unknown, infer Note> ? Note : never;
