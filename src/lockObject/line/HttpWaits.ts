import type { KindName } from "../../store/kinds.js";
import type { LockRef } from "../../store/types.js";
import type { KindObjectPart } from "../KindObjectPart.js";
import type * as z from "zod/mini";
import type { KindWait } from "../../store/kinds.js";
import type { SocketCaps } from "../sockets/socketCaps.js";
import type { StoreKind, WaitOutcome } from "./waitProtocol.js";

/** What the HTTP waits need of the lock object. */
export interface HttpWaitsHost {
  /** The kinds' wait request schema (waitRequestOf in ObjectKinds.ts). */
  waitRequest(): z.ZodMiniType<KindWait[KindName]>;
  caps: SocketCaps;
  part(kind: KindName): KindObjectPart<KindName>;
  /** After a wait's outcome: the object's bookkeeping (watchers, clean-up, listing). */
  afterWait(at: { store: StoreKind; kind: KindName; ref: LockRef }, result: unknown): void;
}

/**
 * The lock object's HTTP waits (POST /wait from the Worker): each answered
 * once granted, refused or timed out, in the same line as the wait sockets.
 * Counted for the cap on waiters; ended early by a disconnect or by the
 * Worker's withdraw (its own request's signal fired).
 */
export class HttpWaits {
  /** Waits in progress by the Worker's waiterId: withdraw() ends one. */
  private readonly byWaiterId = new Map<string, AbortController>();
  /** HTTP waits in this object's line now (for the cap on waiters). */
  private waiting = 0;

  constructor(private readonly host: HttpWaitsHost) {}

  get count(): number {
    return this.waiting;
  }

  async serve(request: Request): Promise<Response> {
    const parsed = this.host.waitRequest().safeParse(await request.json().catch(() => undefined));
    if (!parsed.success)
      return Response.json({ status: "internal", message: `bad wait request: ${parsed.error.message}` } satisfies WaitOutcome<never>);
    const req = parsed.data;
    // Over the cap on waiters, a wait is refused before it joins the line (a try, waitMs 0, never waits).
    const crowded = req.waitMs > 0 ? this.host.caps.admitWaiter() : undefined;
    if (crowded)
      return Response.json({ status: "crowded", retryAfterMs: crowded.retryAfterMs, message: crowded.message } satisfies WaitOutcome<never>);
    // The wait ends early when its request is aborted (where the platform passes a disconnect along)
    // or when the Worker withdraws it (its own request's signal fired).
    const leave = new AbortController();
    request.signal.addEventListener("abort", () => leave.abort(), { once: true });
    if (req.waiterId) this.byWaiterId.set(req.waiterId, leave);
    let outcome: WaitOutcome<unknown>;
    this.waiting++;
    try {
      outcome = await this.host.part(req.kind).wait(req as never, leave.signal);
    } finally {
      this.waiting--;
      if (req.waiterId) this.byWaiterId.delete(req.waiterId);
    }
    this.host.afterWait(req, outcome);
    return Response.json(outcome);
  }

  /** The Worker's client of an HTTP wait hung up: that waiter leaves the line. */
  withdraw(waiterId: string): void {
    this.byWaiterId.get(waiterId)?.abort();
  }
}
