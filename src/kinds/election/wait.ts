import * as z from "zod/mini";
import { waitBase } from "../../lockObject/line/waitProtocol.js";

/** A campaign's request to its election's lock object: wait in line, or try once. Its value travels as `holder`. */
export const electionWait = z.object({
  kind: z.literal("election"),
  ...waitBase,
  /** Never set: a campaign does not re-enter (the mutex's part reads it). */
  token: z.optional(z.string()),
});
export type ElectionWait = z.infer<typeof electionWait>;
