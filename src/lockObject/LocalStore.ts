import { REQUEST_MEMORY_MS } from "../limits.js";
import { forgetExpired } from "../store/durable/answerMemory.js";
import { earliest } from "../store/durable/records.js";
import { type StoreCore, withKinds } from "../store/types.js";
import type { ObjectKind } from "./ObjectKinds.js";

type Deadline = (kv: SyncKvStorage, now: number) => number | undefined;

/**
 * The Durable store as the lock object itself uses it: the kinds' rules run
 * synchronously on this object's storage (atomic like a script), with the
 * object's clock. The Worker reaches it through DurableStore.
 */
export class LocalStore implements StoreCore {
  readonly kind = "durable" as const;

  constructor(
    private readonly kv: SyncKvStorage,
    kinds: readonly ObjectKind[],
  ) {
    this.deadlines = kinds.flatMap((k) => (k.object.nextDeadline ? [k.object.nextDeadline] : []));
  }

  /** When each kind's stored state next needs cleaning up. */
  private readonly deadlines: Deadline[];

  async ping(): Promise<void> {}

  /**
   * When the stored state next has something to clean up; undefined when
   * nothing is kept. Remembered answers are only scanned (and the lapsed ones
   * dropped) when `scanAnswers`; otherwise a write's own answer, kept
   * REQUEST_MEMORY_MS, stands in for them, so a busy lock does not list every
   * answer on every write.
   */
  nextCleanup(now: number, scanAnswers: boolean): number | undefined {
    const answers = scanAnswers ? forgetExpired(this.kv, now) : now + REQUEST_MEMORY_MS;
    if (!scanAnswers && this.ownDeadline) return earliest(answers, this.ownDeadline(this.kv, now));
    let next = answers;
    for (const deadline of this.deadlines) {
      const due = deadline(this.kv, now);
      if (due === undefined) continue;
      this.ownDeadline ??= deadline;
      next = earliest(next, due);
    }
    return next;
  }

  /**
   * The kind's deadline that has answered here, once one has: a lock object
   * keeps one kind's state (one object per kind, namespace and name:
   * src/lockObject/lockObjectOf.ts), so after a write only its kind is
   * asked, not every kind's storage read on every write. The alarm
   * (scanAnswers) still asks them all.
   */
  private ownDeadline: Deadline | undefined;
}

/** The lock object's own store: its storage's cleanup, with each kind's rules on it as a member (`store.mutex`). */
export function localStoreOf(kv: SyncKvStorage, kinds: readonly ObjectKind[]) {
  return withKinds(
    new LocalStore(kv, kinds),
    kinds.map((kind) => ({ name: kind.name, ops: kind.object.durable(kv) })),
  );
}
