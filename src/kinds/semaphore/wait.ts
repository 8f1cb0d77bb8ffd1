import * as z from "zod/mini";
import { waitBase } from "../../lockObject/line/waitProtocol.js";

/** A semaphore request to its lock object. */
export const semaphoreWait = z.object({
  kind: z.literal("semaphore"),
  ...waitBase,
  limit: z.number(),
  permits: z.number(),
});
export type SemaphoreWait = z.infer<typeof semaphoreWait>;
