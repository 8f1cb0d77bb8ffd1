import type { KindName } from "../store/kinds.js";
import { logError } from "../logError.js";
import { type NamespaceObjectRpc, namespaceObjectOf } from "../store/durable/NamespaceObjectRpc.js";
import type { LockRef } from "../store/types.js";

/** A lock is listed this long past its last operation (or past the end of the lease it granted, if later). */
const LISTED_FOR_MS = 10 * 60 * 1000;

/**
 * On the Durable store, what a lock object tells its namespace object so the
 * namespace's listing finds it (NamespaceObject.note). Told after the answer,
 * and only when the listing would otherwise lose the lock before the state
 * just written ends: a busy lock tells it about once per LISTED_FOR_MS / 2,
 * not once per operation. A listing inspects every name it gets, so a name
 * listed a little too long costs an inspect, never a wrong answer.
 */
export class ListingUpdates {
  /** Until when the namespace object lists this lock, as far as this instance told it. */
  private toldUntil = 0;

  constructor(private readonly namespaces: DurableObjectNamespace<NamespaceObjectRpc> | undefined) {}

  /** After an operation of the kind on ref, with its arguments and result. */
  after(kind: KindName, ref: LockRef, args: readonly unknown[], result: unknown): void {
    if (!this.namespaces) return;
    const now = Date.now();
    const until = Math.max(now, endOf(result), now + retainedFor(args)) + LISTED_FOR_MS;
    if (until <= this.toldUntil + LISTED_FOR_MS / 2) return;
    this.toldUntil = until;
    const stub = namespaceObjectOf(this.namespaces, ref.ns, "listing");
    (async () => stub.note(kind, ref.name, until))().catch((err) => {
      this.toldUntil = 0; // tell again next time
      logError(`telling namespace ${ref.ns} of ${kind} ${ref.name} failed; its listing may miss it`, err);
    });
  }
}

/**
 * The latest end a result names: a grant's or lease's expiresAt (a handoff's grant included), a kept result's
 * keptUntil; nested results are looked into two levels deep. Read on every write: a plain walk, no arrays made.
 */
function endOf(result: unknown, depth = 0): number {
  let end = 0;
  if (!result || typeof result !== "object" || depth > 2) return end;
  for (const k in result) {
    const x = (result as Record<string, unknown>)[k];
    if ((k === "expiresAt" || k === "keptUntil") && typeof x === "number") end = Math.max(end, x);
    else if (typeof x === "object") end = Math.max(end, endOf(x, depth + 1));
  }
  return end;
}

/** An idempotency key's result is kept retainMs after it completes: listed that long. */
function retainedFor(args: readonly unknown[]): number {
  const input = args[1] as { retainMs?: unknown } | undefined;
  return typeof input?.retainMs === "number" ? input.retainMs : 0;
}
