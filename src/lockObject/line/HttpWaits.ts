import type { KindName } from "../../store/kinds.js";
import type { LockRef } from "../../store/types.js";
import type { Line } from "./Line.js";
import type { Waiters } from "./Waiters.js";
import type * as z from "zod/mini";
import type { StoreKind, WaitOutcome, WaitRequest } from "./waitProtocol.js";

/** What the HTTP waits need of the lock object. */
export interface HttpWaitsHost {
  /** The kinds' wait request schema (waitRequestOf in ObjectKinds.ts). */
  waitRequest(): z.ZodMiniType<WaitRequest>;
  /** The cap on waiters per lock (sockets/socketCaps.ts): a refusal, or undefined when there is room. */
  caps: { admitWaiter(): { retryAfterMs: number; message: string } | undefined };
  /** Every wait in progress here, HTTP and socket alike (Waiters.ts). */
  waiters: Waiters;
  line(kind: KindName): Line;
  /** After a wait's outcome: the object's bookkeeping (watchers, clean-up, listing). */
  afterWait(at: { store: StoreKind; kind: KindName; ref: LockRef }, result: unknown): void;
}

/**
 * The lock object's HTTP waits (POST /wait from the Worker): each answered
 * once granted, refused or timed out, in the same line as the wait sockets.
 * In the object's one registry of waits (Waiters.ts), counted there for the
 * cap on waiters; ended early by a disconnect or by the Worker's withdraw
 * (LockObject.withdraw: its own request's signal fired).
 */
export class HttpWaits {
  constructor(private readonly host: HttpWaitsHost) {}

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
    // or when the Worker withdraws it by its waiterId (its own request's signal fired).
    const key = req.waiterId ?? crypto.randomUUID();
    const leave = this.host.waiters.join(key, "http");
    request.signal.addEventListener("abort", () => leave.abort(), { once: true });
    let outcome: WaitOutcome<unknown>;
    try {
      outcome = await this.host.line(req.kind).wait(req, leave.signal);
    } finally {
      this.host.waiters.leave(key);
    }
    this.host.afterWait(req, outcome);
    return Response.json(outcome);
  }
}
