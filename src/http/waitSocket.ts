import type { Context } from "hono";
import { UpgradeRequiredError } from "../errors.js";
import { lockObjectOf } from "../lockObject/lockObjectOf.js";
import { kindOps } from "../store/types.js";
import { SOCKET_AT_HEADER, SOCKET_FLOOD_UNTIL_HEADER, SOCKET_PROTOCOL, type SocketAt } from "../wire/socketProtocol.js";
import { floodPenalties } from "../admission/floodPenalties.js";
import type { AppEnv } from "./appTypes.js";
import type { KindName } from "../store/kinds.js";
import { lockName } from "./lockName.js";
import { admitSocketOpen } from "../admission/socketOpens.js";
import { positionOf } from "../validation.js";

/**
 * GET /v1/<kind>/<name>/wait as a WebSocket (an idempotency key's: the end of another caller's run): after the key, the budget and
 * the name are checked here, the socket goes straight to the lock's object,
 * which speaks the wait protocol (src/wire/socketProtocol.ts) with
 * the client; the Worker takes no part in the wait, so a grant is one hop.
 */
export function openWaitSocket(
  c: Context<AppEnv>,
  kind: KindName,
  param: string,
  at: Pick<SocketAt, "mode"> = {},
  withoutSocket?: string,
): Promise<Response> {
  return socketToObject(c, kind, param, at, withoutSocket);
}

/**
 * GET /v1/<kind>/<name>/watch as a WebSocket: the same checks and the same hop; the object pushes the lock's state.
 * A kind whose watch takes a position (`takesPosition`: it keeps its changes at positions) reads `?since=N`: a
 * whole number from 0, else 400 invalid_position here, before any socket (the object refuses one beyond the last).
 */
export function openWatchSocket(c: Context<AppEnv>, kind: KindName, param: string, takesPosition: boolean): Promise<Response> {
  const since = takesPosition ? c.req.query("since") : undefined;
  return socketToObject(c, kind, param, since === undefined ? { watch: true } : { watch: true, since: positionOf(since) });
}

async function socketToObject(
  c: Context<AppEnv>,
  kind: KindName,
  param: string,
  what: Pick<SocketAt, "mode" | "watch" | "since">,
  withoutSocket?: string,
): Promise<Response> {
  const name = lockName(c, param);
  if ((c.req.header("upgrade") ?? "").toLowerCase() !== "websocket") throw new UpgradeRequiredError(what.watch ? "watch" : "wait", withoutSocket);
  const ref = { ns: c.var.ns, name };
  // A kind this store lacks is a 501 here (kindOps), before any socket.
  kindOps(c.var.store, kind);
  const protocols = (c.req.header("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
  const clientIds = clientIdsOf(c);
  const openIds = openIdsOf(c);
  // A client that flooded a socket lately, or opens sockets faster than its key or address may, is refused here,
  // before any object hears of it (admitSocketOpen: admission/socketOpens.ts).
  const tier = admitSocketOpen(c.env, c.var.ns, clientIds, openIds);
  const at: SocketAt = {
    kind,
    store: c.var.store.kind,
    ref,
    protocol: protocols.includes(SOCKET_PROTOCOL),
    // The object counts every message against this budget, as the Worker counted the handshake.
    tier,
    ...what,
  };
  const tokenExpiresAt = c.get("caller").scope?.expiresAt;
  if (tokenExpiresAt !== undefined) at.until = tokenExpiresAt;
  at.clientIds = clientIds;
  at.openIds = openIds;
  // Only what the object needs: never the client's headers (its key among them).
  const answer = await lockObjectOf(c.env.LOCK_OBJECT, kind, ref).fetch("https://lock-object/wait-socket", {
    headers: { upgrade: "websocket", [SOCKET_AT_HEADER]: JSON.stringify(at) },
  });
  const floodUntil = answer.headers.get(SOCKET_FLOOD_UNTIL_HEADER);
  if (floodUntil === null) return answer;
  // Refused for a flood another isolate saw: this one refuses the client's next tries itself.
  floodPenalties.learn(at.clientIds, Number(floodUntil));
  const headers = new Headers(answer.headers);
  headers.delete(SOCKET_FLOOD_UNTIL_HEADER);
  return new Response(answer.body, { status: answer.status, headers });
}

/**
 * Who opens a socket, for the flood penalty: the key (its namespace and
 * name; a scoped token by its namespace, prefix and expiry, so one browser's
 * token does not stand for its issuer's key) and, where the platform says,
 * the client's address. Never the key itself.
 */
function clientIdsOf(c: Context<AppEnv>): string[] {
  const caller = c.get("caller");
  return withAddress(c, [
    caller.scope ? `token:${caller.namespace}/${caller.scope.prefix}/${caller.scope.expiresAt}` : `key:${caller.namespace}/${caller.keyName}`,
  ]);
}

/**
 * Who opens a socket, for the rate of new sockets: the key, every scoped
 * token of its namespace as one (a token can be signed offline for each
 * socket, so a token of its own would be a bucket of its own), and the
 * address where the platform says.
 */
function openIdsOf(c: Context<AppEnv>): string[] {
  const caller = c.get("caller");
  return withAddress(c, [caller.scope ? `tokens:${caller.namespace}` : `key:${caller.namespace}/${caller.keyName}`]);
}

function withAddress(c: Context<AppEnv>, ids: string[]): string[] {
  const address = c.req.header("cf-connecting-ip");
  return address ? [...ids, `address:${address}`] : ids;
}
