/**
 * The wait socket's constants and the key's subprotocol (docs/API.md,
 * "Waiting over a WebSocket"). Its messages, what a client sends and what
 * the object answers, are described in socketMessages.ts (zod schemas, the
 * types inferred from them); their types are re-exported here as types only,
 * so the client SDK, which imports this file, takes in no zod.
 */

export type { KindSocketAnswer, SocketAnswer, SocketAt } from "./socketMessages.js";

/** The subprotocol every wait socket speaks (the server answers with it). */
export const SOCKET_PROTOCOL = "holdfast.v1";

/**
 * Browsers cannot set headers on a WebSocket, so the API key may come as a
 * second subprotocol, `holdfast.key.<base64url of the key>`, never in the
 * URL (URLs are logged). The server never echoes it.
 */
const SOCKET_KEY_PROTOCOL_PREFIX = "holdfast.key.";

/** The header on which the Worker tells the object what the socket is for (internal; never from a client). */
export const SOCKET_AT_HEADER = "x-holdfast-wait-socket";

/** On a handshake the object refused for a flood: until when (epoch ms), for the Worker's own box (internal; never sent on). */
export const SOCKET_FLOOD_UNTIL_HEADER = "x-holdfast-flood-until";

/** The API key carried as a subprotocol, if one was offered (see SOCKET_KEY_PROTOCOL_PREFIX). */
export function keyFromProtocols(header: string | undefined): string | undefined {
  for (const offered of (header ?? "").split(",")) {
    const p = offered.trim();
    if (!p.startsWith(SOCKET_KEY_PROTOCOL_PREFIX)) continue;
    try {
      const b64 = p.slice(SOCKET_KEY_PROTOCOL_PREFIX.length).replace(/-/g, "+").replace(/_/g, "/");
      const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** A key as the subprotocol a client offers (the inverse of keyFromProtocols). */
export function keyAsProtocol(key: string): string {
  const bytes = new TextEncoder().encode(key);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return SOCKET_KEY_PROTOCOL_PREFIX + btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
