import * as z from "zod/mini";
import type { CurrentHolder } from "../../errors.js";

export type StoreKind = "redis" | "durable";

/**
 * What the Worker asks of a lock object when a request must wait or be
 * watched, and what comes back. Sent over fetch (not RPC) so the client's
 * disconnect reaches the object as the request's abort signal where the
 * platform reports it; both directions are decoded with a schema, not cast.
 * Every kind's request (src/kinds/<kind>/wait.ts) is this base with its
 * own `kind` and fields; waitRequestOf (ObjectKinds.ts) joins them.
 */
export const waitBase = {
  /** Which store the request uses (never its credentials: the object has its own). */
  store: z.enum(["redis", "durable"]),
  ref: z.object({ ns: z.string(), name: z.string() }),
  ttlMs: z.number(),
  /** 0: try once, never queue (still never ahead of queued waiters). */
  waitMs: z.number(),
  /** Watch this lease and notify here when it lapses. */
  onExpire: z.optional(z.string()),
  /**
   * The owner token of a grant made at once (a try, or a try with a watch),
   * when the Worker chose it (derived from the client's request id, so the
   * client's retry finds its own grant); otherwise, and always for a grant
   * from the line, the object makes one.
   */
  newToken: z.optional(z.string()),
  /** The request id a re-entry is remembered under (from the client's, when it sent one). */
  requestId: z.optional(z.string()),
  /** The Worker's name for this wait, so it can withdraw it (LockObject.withdraw) when its client hangs up. */
  waiterId: z.optional(z.string()),
  /** The holder label to keep with the lease it gets. */
  holder: z.optional(z.string()),
  /** The mutex lease's lock-delay (ms). */
  lockDelayMs: z.optional(z.number()),
};

/** Any kind's request to its lock object, as the core reads it: each kind's own extends this (src/kinds/<kind>/wait.ts). */
export interface WaitRequest {
  /** Which kind's request it is (its name). */
  kind: string;
  store: StoreKind;
  ref: { ns: string; name: string };
  ttlMs: number;
  waitMs: number;
  /** A held token (the kinds whose acquire takes one): a re-entry, tried at once, never queued, never refused for the line. */
  token?: string;
  onExpire?: string;
  newToken?: string;
  requestId?: string;
  waiterId?: string;
  holder?: string;
  lockDelayMs?: number;
}

export type WaitOutcome<Grant> =
  /** `pickup`: the grant came from the queue; confirm delivery with pickedUp(token). */
  | { status: "granted"; grant: Grant; pickup: boolean }
  | { status: "locked"; retryAfterMs: number; current?: CurrentHolder }
  | { status: "lost" }
  /** The request can never be granted as asked (a kind's own refusal: a limit that differs, an upgrade it does not allow). */
  | { status: "refused"; code: string; message: string }
  | { status: "unavailable"; message: string; outcome: "unknown" | "not_applied" }
  /** The line is at its cap on waiters (socketCaps.ts): come back later. */
  | { status: "crowded"; retryAfterMs: number; message: string }
  | { status: "internal"; message: string };

/** The schema of a wait's answer, for one kind's grant. */
export function waitOutcomeSchema<Grant>(grant: z.ZodMiniType<Grant>): z.ZodMiniType<WaitOutcome<Grant>> {
  return z.discriminatedUnion("status", [
    z.object({ status: z.literal("granted"), grant, pickup: z.boolean() }),
    z.object({
      status: z.literal("locked"),
      retryAfterMs: z.number(),
      current: z.optional(z.object({ holder: z.nullable(z.string()), expiresAt: z.number() })),
    }),
    z.object({ status: z.literal("lost") }),
    z.object({ status: z.literal("refused"), code: z.string(), message: z.string() }),
    z.object({ status: z.literal("unavailable"), message: z.string(), outcome: z.enum(["unknown", "not_applied"]) }),
    z.object({ status: z.literal("crowded"), retryAfterMs: z.number(), message: z.string() }),
    z.object({ status: z.literal("internal"), message: z.string() }),
  ]) as z.ZodMiniType<WaitOutcome<Grant>>;
}

/** How a wait stands in line, beyond its request (LineOrder.wait). */
export interface WaitOptions {
  /** The grant counts only once its client acknowledges it (a wait socket): never granted unmarked. */
  mustPickUp?: boolean;
  /** The waiter's token, when its caller keeps it (a wait socket restored after the object woke); else a fresh one. */
  token?: string;
  /** The store may have it registered already (a wait socket put back in line on waking): it leaves as one that was tried. */
  registered?: boolean;
  /** Handed the waiter's renewal (a wait socket's `renew`): its wait then ends waitMs from now, in the same place. */
  renewable?: (renew: (waitMs: number) => void) => void;
}
