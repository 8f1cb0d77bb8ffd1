import { REQUEST_MEMORY_MS } from "../limits.js";
import { forgetExpired } from "../store/durable/answerMemory.js";
import type { EveryKindStore } from "../store/types.js";
import type { DurableKinds } from "./ObjectKinds.js";

/**
 * The Durable store as the lock object itself uses it: the kinds' rules run
 * synchronously on this object's storage (atomic like a script), with the
 * object's clock. The Worker reaches it through DurableStore.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the kinds' operations are assigned in the constructor; the interface below declares them
export class LocalStore {
  readonly kind = "durable" as const;

  constructor(
    private readonly kv: SyncKvStorage,
    private readonly kinds: DurableKinds,
  ) {
    Object.assign(this, kinds.durable(kv));
  }

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
    const kept = [...this.kinds.durableDeadlines.map((next) => next(this.kv, now)), answers].filter((t): t is number => t !== undefined);
    return kept.length ? Math.min(...kept) : undefined;
  }
}

// Every kind's operations, one member per kind (handed in: ObjectKinds.durable), assigned in the constructor.
export interface LocalStore extends EveryKindStore {}
