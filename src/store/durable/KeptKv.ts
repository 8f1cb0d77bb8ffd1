/**
 * The Durable store's storage, as a lock object keeps it (beside the records
 * and the remembered answers it holds, records.ts and answerMemory.ts): the
 * object's storage.kv with what it has read or written kept in memory,
 * written through. The kinds' rules read the same few records several
 * times a request (the lease, the fence, the registration, the lock-delay,
 * then again for the clean-up deadline): from memory each costs a map lookup,
 * not a SQLite lookup and a deserialisation.
 *
 * Why the memory never disagrees with storage:
 * - a Durable Object's storage is its own, and the object reads and writes it
 *   only through this one instance (LockObject makes it and hands it to its
 *   LocalStore and its watches), so nothing writes behind its back;
 * - the object runs one event at a time and these calls are synchronous: no
 *   other event runs between a read and the write after it;
 * - a write is kept only once storage took it (a put or delete that throws
 *   keeps nothing). If the event's implicit commit fails, the runtime resets
 *   the object, and this memory goes with it; the output gate holds every
 *   answer until that commit, with or without it;
 * - hibernation, eviction and restarts make a new instance, whose memory
 *   starts empty and is read from storage again;
 * - deleteAll (the alarm's last clean-up) is followed by forget().
 * Values are frozen, the ones put included (a value put is the stored one from
 * then on): a caller that changed a value it read would change what the next
 * read finds, which storage never did; frozen, that throws (strict mode).
 * list() is not kept: it reads storage, which has every write.
 */
export class KeptKv implements SyncKvStorage {
  /** Each key read or written: its value, or ABSENT. Starts over past MAX_KEPT keys (every release remembers its answer under its own request id). */
  private readonly known = new Map<string, unknown>();

  constructor(private readonly kv: SyncKvStorage) {}

  get<T = unknown>(key: string): T | undefined {
    const v = this.known.get(key);
    if (v !== undefined) return v === ABSENT ? undefined : (v as T);
    const read = this.kv.get<T>(key);
    this.keep(key, read === undefined ? ABSENT : frozen(read));
    return read;
  }

  put<T>(key: string, value: T): void {
    this.kv.put(key, value);
    this.keep(key, frozen(value));
  }

  delete(key: string): boolean {
    // Known absent: nothing to delete, and no statement for storage to run.
    if (this.known.get(key) === ABSENT) return false;
    const had = this.kv.delete(key);
    this.keep(key, ABSENT);
    return had;
  }

  list<T = unknown>(options?: SyncKvListOptions): Iterable<[string, T]> {
    return this.kv.list<T>(options);
  }

  /** Storage was emptied behind these calls (deleteAll): nothing kept is true any more. */
  forget(): void {
    this.known.clear();
  }

  private keep(key: string, v: unknown): void {
    if (this.known.size >= MAX_KEPT && !this.known.has(key)) this.known.clear();
    this.known.set(key, v);
  }
}

/** What a key known to be absent is kept as (a stored value is never this object). */
const ABSENT: unknown = Object.freeze({ absent: true });

/** Keys kept at most: a lock's own records are a handful; the rest are remembered answers, read once. */
const MAX_KEPT = 256;

/** The value, and everything in it, made read-only. */
function frozen<T>(v: T): T {
  // Bytes cannot be frozen (a view with elements refuses): left as they are; the kinds store none.
  if (typeof v !== "object" || v === null || Object.isFrozen(v) || ArrayBuffer.isView(v)) return v;
  Object.freeze(v);
  for (const k in v) frozen((v as Record<string, unknown>)[k]);
  return v;
}
