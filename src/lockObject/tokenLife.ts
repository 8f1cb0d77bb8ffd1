import { UnauthorizedError } from "../errors.js";
import type { SocketAt } from "./sockets/socketSchemas.js";

/**
 * A socket opened with a scoped token lives no longer than the token: past
 * `at.until` its next message is refused 401 `token_expired` (the socket then
 * ends), as the Worker refuses the token's requests. Without this a kept
 * socket would go on heartbeating a lease, or a watch go on pushing, with a
 * token that expired long ago.
 */
export function checkTokenLife(at: SocketAt, now = Date.now()): void {
  if (at.until !== undefined && now >= at.until) {
    throw new UnauthorizedError(
      `the token this socket was opened with expired at ${new Date(at.until).toISOString()}: ask for a new one`,
      "token_expired",
    );
  }
}
