/**
 * What workerd itself costs under a wait socket flood, with no holdfast code
 * (chaos/flood.ts measures holdfast against it in the same run). Spoken in
 * the service's shapes, so one flooder and one probe drive both:
 *
 *   GET  /v1/locks/<name>/wait (WebSocket)  -> the name's object accepts it (hibernation API);
 *        {"type":"acquire"...} -> {"type":"granted","grant":{"token"}}, {"type":"ack"...} -> {"type":"held"},
 *        anything else ignored unread; at its CLOSE_AT-th frame the socket is closed, and what
 *        still arrives on it is dropped by one in-memory check
 *   POST /v1/locks/<name>/acquire | release -> one RPC to the name's object, one storage write
 *
 * The probe's lock objects and the flood's are different objects, as in the service.
 */
import { DurableObject } from "cloudflare:workers";

interface Env {
  FLOOR: DurableObjectNamespace<FloodFloor>;
}

/** The floor ends a flooding socket at this frame (the measure: the least a refusal can cost). */
const CLOSE_AT = 20;
const SOCKET = /^\/v1\/locks\/([^/]+)\/wait$/;
const PROBE = /^\/v1\/locks\/([^/]+)\/(acquire|release)$/;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
    const socket = SOCKET.exec(path);
    if (socket && request.headers.get("upgrade") === "websocket") {
      return env.FLOOR.get(env.FLOOR.idFromName(`socket:${socket[1]}`)).fetch(request);
    }
    const probe = PROBE.exec(path);
    if (!probe || request.method !== "POST") return new Response("not found", { status: 404 });
    await request.arrayBuffer();
    const written = await env.FLOOR.get(env.FLOOR.idFromName(`probe:${probe[1]}`)).write(probe[2]);
    return Response.json(probe[2] === "acquire" ? { token: written } : { released: true });
  },
};

export class FloodFloor extends DurableObject<Env> {
  private readonly frames = new Map<WebSocket, number>();
  private readonly ended = new WeakSet<WebSocket>();

  async fetch(request: Request): Promise<Response> {
    const [client, server] = Object.values(new WebSocketPair());
    this.ctx.acceptWebSocket(server);
    const offered = request.headers.get("sec-websocket-protocol")?.split(",")[0]?.trim();
    return new Response(null, { status: 101, webSocket: client, headers: offered ? { "Sec-WebSocket-Protocol": offered } : {} });
  }

  write(op: string): string {
    const token = crypto.randomUUID();
    this.ctx.storage.kv.put("holder", op === "acquire" ? token : "");
    return token;
  }

  webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    if (this.ended.has(ws)) return;
    const n = (this.frames.get(ws) ?? 0) + 1;
    this.frames.set(ws, n);
    if (n >= CLOSE_AT) {
      this.ended.add(ws);
      this.frames.delete(ws);
      ws.close(1000, "flood");
      return;
    }
    if (typeof message !== "string") return;
    if (message.startsWith('{"type":"acquire"')) ws.send(JSON.stringify({ type: "granted", grant: { token: crypto.randomUUID(), fence: n } }));
    else if (message.startsWith('{"type":"ack"')) ws.send(JSON.stringify({ type: "held" }));
  }

  webSocketClose(ws: WebSocket): void {
    this.frames.delete(ws);
    try {
      ws.close(1000, "closed");
    } catch {
      // Already closed from this side.
    }
  }
}
