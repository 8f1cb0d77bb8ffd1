/**
 * The wait socket (docs/API.md, "Waiting over a WebSocket"): a client opens
 * GET /v1/<kind path>/<name>/wait as a WebSocket, the Worker hands the
 * socket to the lock's object, and the two speak these JSON messages:
 *
 *   client -> object  {"type":"acquire", ...the kind's acquire body}   once, first
 *   client -> object  {"type":"renew","waitMs":n}                     while waiting: the wait now ends n ms from now, same place
 *   object -> client  {"type":"granted","grant":{...}}                the lock is offered
 *   client -> object  {"type":"ack","token":"..."}                     it is taken
 *   object -> client  {"type":"held"}                                  it is the client's; the object closes (1000)
 *   object -> client  {"type":"timeout","retryAfterMs":n}              not granted within waitMs; closes
 *   object -> client  {"type":"error","status":n,"error":"...","message":"..."}   as the HTTP error; closes
 *
 * An idempotency key's wait socket (GET /v1/idempotency/<key>/wait) waits
 * for another caller's run of the key to end instead:
 *
 *   client -> object  {"type":"watch","waitMs":n}
 *   object -> client  {"type":"completed","response":...,"completedAt":n,"fence":n}   the stored result; closes
 *   object -> client  {"type":"free"}                                  nobody runs it now: begin it; closes
 *   object -> client  {"type":"timeout","retryAfterMs":n}              still running after waitMs; closes
 *
 * An acquire with `"keep": true` keeps the socket open after `held`, for
 * the holder's own heartbeats and release (the release then hands the lock
 * to the next waiter in the same object, with no Worker in between):
 *
 *   client -> object  {"type":"heartbeat","ttlMs"?: n}   -> {"type":"heartbeat","expiresAt","ttlMs","fence"}
 *   client -> object  {"type":"release"}                 -> {"type":"released", ...as HTTP}; closes
 *
 * A grant counts only once acknowledged: a socket that closes before its
 * ack gives the grant back to the line at once, and one that closes while
 * waiting leaves the line at once. After `held`, closing changes nothing: a
 * lease ends by release or TTL.
 *
 * A watch socket (GET /v1/<kind path>/<name>/watch) takes no place in
 * line: it pushes the lock's state, as its GET answers it, whenever it changes:
 *
 *   client -> object  {"type":"watch"}                                once, first
 *   object -> client  {"type":"state","state":{...the GET body}}     at once, then on every change
 *   object -> client  {"type":"error",...}                            as above; closes
 *
 * No schema library here: the client SDK imports this file too (the
 * object's checks are in socketSchemas.ts).
 */

/** The subprotocol every wait socket speaks (the server answers with it). */
export const SOCKET_PROTOCOL = "holdfast.v1";

/**
 * Browsers cannot set headers on a WebSocket, so the API key may come as a
 * second subprotocol, `holdfast.key.<base64url of the key>`, never in the
 * URL (URLs are logged). The server never echoes it.
 */
export const SOCKET_KEY_PROTOCOL_PREFIX = "holdfast.key.";

/** The header on which the Worker tells the object what the socket is for (internal; never from a client). */
export const SOCKET_AT_HEADER = "x-holdfast-wait-socket";

/** On a handshake the object refused for a flood: until when (epoch ms), for the Worker's own box (internal; never sent on). */
export const SOCKET_FLOOD_UNTIL_HEADER = "x-holdfast-flood-until";

/** What a socket is for: set by the Worker from the path and the key, sent to the object on SOCKET_AT_HEADER. */
export interface SocketAt<Kind extends string = string> {
  /** The kind's name, as the API names it ("mutex"). */
  kind: Kind;
  store: "redis" | "durable";
  ref: { ns: string; name: string };
  /** The read-write lock's mode, from the path. */
  mode?: "read" | "write";
  /** A watch socket (GET .../watch): the lock's state pushed on every change, no place in line. */
  watch?: true;
  /** The client offered SOCKET_PROTOCOL (a browser must be answered with it). */
  protocol: boolean;
  /** The namespace's request budget tier (RATE_LIMIT_TIERS, read by the Worker): every message counts against it. */
  tier?: "low" | "standard" | "high" | "off";
  /**
   * A socket opened with a scoped token: when the token expires (epoch ms).
   * From then on the object answers its messages 401 `token_expired` and
   * ends it (a watch socket, at that time), as the Worker refuses its requests.
   */
  until?: number;
  /**
   * Who opened it, for the flood penalty (src/lockObject/sockets/floodPenalties.ts):
   * the key's id (namespace and key name, or a scoped token's scope) and the
   * client's address where the platform gives one. Never the key itself.
   */
  clientIds?: string[];
}

/** What the object sends. */
export type SocketAnswer =
  | { type: "granted"; grant: unknown }
  | { type: "held" }
  | { type: "heartbeat"; expiresAt: number; ttlMs: number; fence: number }
  | ({ type: "released" } & Record<string, unknown>)
  | { type: "completed"; response: unknown; completedAt: number; fence: number }
  | { type: "free" }
  | { type: "state"; state: Record<string, unknown> }
  | { type: "timeout"; retryAfterMs: number }
  | { type: "error"; status: number; error: string; message: string; [field: string]: unknown };

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
