import * as z from "zod/mini";
import { intFrom, ttlMs } from "../../wire/schemas.js";
import { WAIT_MAX_MS } from "../../limits.js";
import type { KindName } from "../../store/kinds.js";
import { SOCKET_AT_HEADER, type SocketAt as WireSocketAt } from "../../wire/socketProtocol.js";

/** What a socket is for, as the object reads it: its kind one the object knows by name. */
export type SocketAt = WireSocketAt<KindName>;

/** The object's checks of what reaches a wait socket (socketProtocol.ts). */
export const socketAtSchema = z.object({
  kind: z.string().check(z.minLength(1)),
  store: z.enum(["redis", "durable"]),
  ref: z.object({ ns: z.string(), name: z.string() }),
  /** The read-write lock's mode, from the path. */
  mode: z.optional(z.enum(["read", "write"])),
  /** A watch socket: the lock's state pushed on every change. */
  watch: z.optional(z.literal(true)),
  /** The client offered SOCKET_PROTOCOL (a browser must be answered with it). */
  protocol: z.boolean(),
  /** The namespace's budget tier: the socket's messages count against it. */
  tier: z.optional(z.enum(["low", "standard", "high", "off"])),
  /** A scoped token's expiry (epoch ms): the socket lives no longer (tokenLife.ts). */
  until: z.optional(z.number()),
  /** Who opened it, for the flood penalty (floodPenalties.ts). */
  clientIds: z.optional(z.array(z.string())),
}) as unknown as z.ZodMiniType<SocketAt>;

/** An idempotency key's wait: for how long to wait for another caller's run to end. */
export const watchMessage = z.strictObject({ type: z.literal("watch"), waitMs: intFrom(1, WAIT_MAX_MS) });

/** A waiter's renewal: its wait now ends waitMs from now, in the same place in the line. */
export const renewMessage = z.strictObject({ type: z.literal("renew"), waitMs: intFrom(1, WAIT_MAX_MS) });

/** A watch socket's first and only message: start pushing the lock's state. */
export const watchStartMessage = z.strictObject({ type: z.literal("watch") });

export const ackMessage = z.strictObject({ type: z.literal("ack"), token: z.string() });

/** A socket holder's heartbeat (with an optional new ttlMs) or release. */
export const holderMessage = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("heartbeat"), ttlMs: z.optional(ttlMs) }),
  z.strictObject({ type: z.literal("release") }),
]);

/** What a socket handed over by the Worker is for (its SOCKET_AT_HEADER), checked; undefined when missing or malformed. */
export function socketAtOf(request: Request): SocketAt | undefined {
  try {
    const at = socketAtSchema.safeParse(JSON.parse(request.headers.get(SOCKET_AT_HEADER) ?? "null"));
    return at.success ? at.data : undefined;
  } catch {
    return undefined;
  }
}
