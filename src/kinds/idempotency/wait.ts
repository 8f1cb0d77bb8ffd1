import * as z from "zod/mini";
import { waitBase } from "../../lockObject/line/waitProtocol.js";

/**
 * A begin with onExpire, sent to the key's lock object, which begins and
 * watches in one step (waitMs is 0: an idempotency key never waits in line).
 */
export const idempotencyWait = z.object({
  kind: z.literal("idempotency"),
  ...waitBase,
  retainMs: z.number(),
  fingerprint: z.optional(z.string()),
});
export type IdempotencyWait = z.infer<typeof idempotencyWait>;

/** The begin's answer, as it comes back from the object. */
export const idempotencyBeginResult = z.discriminatedUnion("status", [
  z.object({ status: z.literal("started"), token: z.string(), fence: z.number(), ttlMs: z.number(), expiresAt: z.number() }),
  z.object({ status: z.literal("completed"), response: z.unknown(), completedAt: z.number(), fence: z.number() }),
  z.object({ status: z.literal("in_progress"), retryAfterMs: z.number(), expiresAt: z.number(), holder: z.nullable(z.string()) }),
  z.object({ status: z.literal("mismatch") }),
]);
