import * as z from "zod/mini";
import type { SocketAt } from "./socketProtocol.js";

/** The object's checks of what reaches a wait socket (socketProtocol.ts). */
export const socketAtSchema: z.ZodMiniType<SocketAt> = z.object({
  kind: z.enum(["mutex", "rwlock", "semaphore"]),
  store: z.enum(["redis", "durable"]),
  ref: z.object({ ns: z.string(), name: z.string() }),
  /** The read-write lock's mode, from the path. */
  mode: z.optional(z.enum(["read", "write"])),
  /** The client offered SOCKET_PROTOCOL (a browser must be answered with it). */
  protocol: z.boolean(),
});

export const ackMessage = z.strictObject({ type: z.literal("ack"), token: z.string() });
