import * as z from "zod/mini";
import { waitBase } from "../../lockObject/line/waitProtocol.js";

/** A mutex request to its lock object: wait in line, or try once (with a watch, or re-entering with the held token). */
export const mutexWait = z.object({
  kind: z.literal("mutex"),
  ...waitBase,
  /** Re-entry with the held token (then waitMs is 0). */
  token: z.optional(z.string()),
});
export type MutexWait = z.infer<typeof mutexWait>;
