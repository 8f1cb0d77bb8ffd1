/**
 * The relay: the least a lock handoff over wait sockets can cost in a
 * Durable Object, for the bench's floor rows (bench/relay.ts). No holdfast
 * code: one object per lock name passes the lock along a FIFO of sockets,
 * speaking the message pattern of a holdfast wait socket kept as the holder
 * (docs/API.md, "Waiting over a WebSocket"), so the bench drives both with
 * the same client:
 *
 *   client -> relay  {"type":"acquire",...}    free: one storage write, then granted; else it joins the line
 *   relay -> client  {"type":"granted","grant":{"token"}}
 *   client -> relay  {"type":"ack","token"}    -> {"type":"held"}
 *   client -> relay  {"type":"release"}        one storage write (the next holder), granted to the next
 *                                              in line, then {"type":"released"} and a close
 *
 * Every socket is kept as its holder's after `held` (the bench's acquires
 * say `"keep": true`; there is no HTTP release here).
 * Left out, because the bench never needs them: keys, validation, TTLs and
 * wait deadlines (a bench wait ends in a grant or in the client closing),
 * heartbeats, rate limits, caps. `GET /v1/locks/<name>` answers
 * {"waiters": n}, as the service's inspect does, for the bench to see a
 * waiter queued.
 */
import { DurableObject } from "cloudflare:workers";

interface Env {
  RELAY: DurableObjectNamespace<Relay>;
}

/** Where a socket is, kept as its attachment so a woken object can rebuild its line. */
interface Attachment {
  /** Arrival order. */
  seq: number;
  phase: "open" | "waiting" | "offered" | "held" | "done";
  /** The grant offered or held. */
  token?: string;
}

const LOCK_PATH = /^\/v1\/locks\/([^/]+)(?:\/wait)?$/;

export default {
  fetch(request: Request, env: Env): Promise<Response> | Response {
    const name = LOCK_PATH.exec(new URL(request.url).pathname)?.[1];
    if (!name) return new Response("not found", { status: 404 });
    return env.RELAY.get(env.RELAY.idFromName(name)).fetch(request);
  },
};

export class Relay extends DurableObject<Env> {
  /** Sockets waiting, first come first served. */
  private readonly line: WebSocket[] = [];
  /** The socket offered the lock or holding it; none: the lock is free. */
  private holder: WebSocket | undefined;
  private lastSeq = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Woken from hibernation with sockets open: the line and the holder as the attachments say.
    const waiting: Array<{ ws: WebSocket; seq: number }> = [];
    for (const ws of ctx.getWebSockets()) {
      const a = ws.deserializeAttachment() as Attachment | null;
      if (!a) continue;
      this.lastSeq = Math.max(this.lastSeq, a.seq);
      if (a.phase === "waiting") waiting.push({ ws, seq: a.seq });
      else if (a.phase === "offered" || a.phase === "held") this.holder = ws;
    }
    this.line.push(...waiting.sort((x, y) => x.seq - y.seq).map((w) => w.ws));
  }

  fetch(request: Request): Response {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return Response.json({ waiters: this.line.length });
    const [client, server] = Object.values(new WebSocketPair());
    this.ctx.acceptWebSocket(server);
    attach(server, { seq: ++this.lastSeq, phase: "open" });
    // Answer with the first subprotocol the client offered, as a browser client needs (the service answers its own).
    const offered = request.headers.get("sec-websocket-protocol")?.split(",")[0]?.trim();
    return new Response(null, { status: 101, webSocket: client, headers: offered ? { "Sec-WebSocket-Protocol": offered } : {} });
  }

  webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    const a = ws.deserializeAttachment() as Attachment;
    if (a.phase === "done") return; // ended here: what still arrives is dropped
    const m = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message)) as { type?: string; token?: string };
    if (m.type === "acquire" && a.phase === "open") {
      if (this.holder) {
        attach(ws, { seq: a.seq, phase: "waiting" });
        this.line.push(ws);
      } else this.offer(ws, a.seq);
    } else if (m.type === "ack" && a.phase === "offered" && m.token === a.token) {
      attach(ws, { ...a, phase: "held" });
      ws.send('{"type":"held"}');
    } else if (m.type === "release" && a.phase === "held") {
      this.passOn();
      ws.send('{"type":"released"}');
      this.finish(ws, a.seq, "released");
    } else {
      ws.send(JSON.stringify({ type: "error", status: 400, error: "invalid_body", message: `${m.type} out of turn (${a.phase})` }));
      this.leave(ws, a);
      this.finish(ws, a.seq, "error");
    }
  }

  webSocketClose(ws: WebSocket): void {
    this.leave(ws, ws.deserializeAttachment() as Attachment);
  }

  webSocketError(ws: WebSocket): void {
    this.leave(ws, ws.deserializeAttachment() as Attachment);
  }

  /** The lock to this socket: one storage write (who holds it), then the offer. */
  private offer(ws: WebSocket, seq: number): void {
    const token = crypto.randomUUID();
    this.ctx.storage.kv.put("holder", token);
    this.holder = ws;
    attach(ws, { seq, phase: "offered", token });
    ws.send(JSON.stringify({ type: "granted", grant: { token } }));
  }

  /** The lock to the next in line (one write), or free (one write). */
  private passOn(): void {
    this.holder = undefined;
    const next = this.line.shift();
    if (next) this.offer(next, (next.deserializeAttachment() as Attachment).seq);
    else this.ctx.storage.kv.delete("holder");
  }

  /** A socket gone or ended: out of the line; an offer or a hold it had passes on (no TTL here to end it). */
  private leave(ws: WebSocket, a: Attachment | null): void {
    if (a?.phase === "waiting") {
      const at = this.line.indexOf(ws);
      if (at >= 0) this.line.splice(at, 1);
    } else if ((a?.phase === "offered" || a?.phase === "held") && this.holder === ws) this.passOn();
    if (a && a.phase !== "done") attach(ws, { seq: a.seq, phase: "done" });
  }

  private finish(ws: WebSocket, seq: number, reason: string): void {
    attach(ws, { seq, phase: "done" });
    try {
      ws.close(1000, reason);
    } catch {
      // Already closing.
    }
  }
}

function attach(ws: WebSocket, a: Attachment): void {
  ws.serializeAttachment(a);
}
