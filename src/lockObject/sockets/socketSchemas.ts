import type * as z from "zod/mini";
import type { KindName } from "../../store/kinds.js";
import { SOCKET_AT_HEADER } from "../../wire/socketProtocol.js";
import { socketAtSchema as anyKindSocketAt, type SocketAt as WireSocketAt } from "../../wire/socketMessages.js";

/**
 * What reaches the object's sockets, as the object reads it. The messages
 * themselves are described in src/wire/socketMessages.ts; the ones
 * WaitSockets.ts and socketHolder.ts check are named here too, for their
 * imports.
 */
export { ackMessage, awaitEndMessage, holderMessage, renewMessage } from "../../wire/socketMessages.js";
export { socketMessageOf, waitSocketMessageOf } from "../../wire/parse.js";

/** What a socket is for, as the object reads it: its kind one the object knows by name. */
export type SocketAt = WireSocketAt<KindName>;

/** The check of SOCKET_AT_HEADER (socketMessages.ts): a kind by name, which the Worker took from its own list. */
const socketAtSchema = anyKindSocketAt as unknown as z.ZodMiniType<SocketAt>;

/** A socket handed over by the Worker (it says what the socket is for), not a POST /wait. */
export function isSocketRequest(request: Request): boolean {
  return request.headers.has(SOCKET_AT_HEADER);
}

/** What a socket handed over by the Worker is for (its SOCKET_AT_HEADER), checked; undefined when missing or malformed. */
export function socketAtOf(request: Request): SocketAt | undefined {
  try {
    const at = socketAtSchema.safeParse(JSON.parse(request.headers.get(SOCKET_AT_HEADER) ?? "null"));
    return at.success ? at.data : undefined;
  } catch {
    return undefined;
  }
}
