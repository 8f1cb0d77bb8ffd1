import * as z from "zod/mini";
import { waitBase } from "../../lockObject/line/waitProtocol.js";

/** A flow limit's request to its lock object. */
export const flowWait = z.object({
  kind: z.literal("flow"),
  ...waitBase,
  concurrency: z.optional(z.number()),
  rate: z.optional(z.object({ count: z.number(), perMs: z.number() })),
});
export type FlowWait = z.infer<typeof flowWait>;
