import * as z from "zod/mini";
import { waitBase } from "../../lockObject/line/waitProtocol.js";

/** A semaphore request to its lock object. */
export const semaphoreWait = z.object({
  kind: z.literal("semaphore"),
  ...waitBase,
  limit: z.number(),
  permits: z.number(),
});
type SemaphoreWait = z.infer<typeof semaphoreWait>;

/** The kind adds itself to the core's maps of kinds (src/store/kinds.ts). */
declare module "../../store/kinds.js" {
  interface KindWait {
    semaphore: SemaphoreWait;
  }
}
