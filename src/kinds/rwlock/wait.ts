import * as z from "zod/mini";
import { waitBase } from "../../lockObject/line/waitProtocol.js";

/** A read-write lock request to its lock object. */
export const rwLockWait = z.object({
  kind: z.literal("rwlock"),
  ...waitBase,
  mode: z.enum(["read", "write"]),
  /** Re-entry (or a writer's read) with the held token (then waitMs is 0). */
  token: z.optional(z.string()),
});
export type RwLockWait = z.infer<typeof rwLockWait>;
