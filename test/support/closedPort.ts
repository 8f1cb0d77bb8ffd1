import { childPort } from "./childPort.mjs";

/**
 * A loopback port where nothing listens, so a connection to it is refused. It comes from below the OS's ephemeral
 * range (childPort.mjs): one the system handed out and closed again could be handed to another file's server, and the
 * connection would then be answered.
 */
export function closedPort(): Promise<number> {
  return childPort();
}
