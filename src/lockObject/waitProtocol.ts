import { z } from "zod";
import type { LockRef } from "../store/LockRef";

export type StoreKind = "redis" | "durable";

/**
 * What the Worker asks of a lock object when a request must wait or be
 * watched, and what comes back. Sent over fetch (not RPC) so the client's
 * disconnect reaches the object as the request's abort signal where the
 * platform reports it; the answer is decoded with a schema, not cast.
 */
export interface WaitRequest {
  kind: "mutex";
  /** Which store the request uses (never its credentials: the object has its own). */
  store: StoreKind;
  ref: LockRef;
  ttlMs: number;
  /** 0: try once, never queue (still never ahead of queued waiters). */
  waitMs: number;
  /** Re-entry with the held token (then waitMs is 0). */
  token?: string;
  /** Watch this lease and notify here when it lapses. */
  onExpire?: string;
}

const grantSchema = z.object({
  name: z.string(),
  token: z.string(),
  fence: z.number(),
  ttlMs: z.number(),
  expiresAt: z.number(),
  count: z.number(),
});

export const waitOutcomeSchema = z.discriminatedUnion("status", [
  /** `pickup`: the grant came from the queue; confirm delivery with pickedUp(token). */
  z.object({ status: z.literal("granted"), grant: grantSchema, pickup: z.boolean() }),
  z.object({ status: z.literal("locked"), retryAfterMs: z.number() }),
  z.object({ status: z.literal("lost") }),
  z.object({ status: z.literal("unavailable"), message: z.string(), outcome: z.enum(["unknown", "not_applied"]) }),
  z.object({ status: z.literal("internal"), message: z.string() }),
]);

export type WaitOutcome = z.infer<typeof waitOutcomeSchema>;

/** The store behind the object did not answer (errors lose their type over RPC, so it is said as a result). */
export interface ObjectStoreFault {
  status: "unavailable";
  message: string;
  outcome: "unknown" | "not_applied";
}

export const waitRequestSchema: z.ZodType<WaitRequest> = z.object({
  kind: z.literal("mutex"),
  store: z.enum(["redis", "durable"]),
  ref: z.object({ ns: z.string(), name: z.string() }),
  ttlMs: z.number(),
  waitMs: z.number(),
  token: z.string().optional(),
  onExpire: z.string().optional(),
});
