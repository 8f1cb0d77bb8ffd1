import type { Env } from "../env.js";
import { InternalError, InvalidInputError, LeaseLostError, StoreUnavailableError, TooLargeError } from "../errors.js";
import { errorAnswer } from "../http/errorResponse.js";
import { checkOnExpire } from "../http/onExpire.js";
import { jsonOf, validated } from "../http/readBody.js";
import type { KindName, KindWait, WaitingKindName } from "../kinds/registry/ops.js";
import { socketWaits } from "../kinds/registry/sockets.js";
import { BODY_MAX_BYTES } from "../limits.js";
import { newOwnerToken } from "../tokens.js";
import { grantOf } from "./grantOf.js";
import type { KindObjectPart } from "./KindObjectPart.js";
import { writeMetric } from "../metrics.js";
import { SOCKET_AT_HEADER, SOCKET_PROTOCOL, type SocketAnswer, type SocketAt } from "./socketProtocol.js";
import { ackMessage, holderMessage, socketAtSchema, watchMessage } from "./socketSchemas.js";
import type { IdempotencyObjectPart } from "../kinds/idempotency/objectPart.js";

/**
 * Where a socket is in its one wait; kept as the socket's attachment, so it
 * survives the object's hibernation. A waiting socket keeps what it takes to
 * wait again when the object wakes (restore): its line token, its request,
 * its deadline and its place (seq), unless that is too large to attach.
 */
type SocketPhase =
  | { phase: "open" }
  | { phase: "waiting"; resume?: Resume }
  | { phase: "granted"; token: string; keep?: boolean }
  /** Held, the socket kept open (`keep`) for the holder's heartbeats and release. */
  | { phase: "holding"; token: string }
  | { phase: "done" };
/** A lock wait's place in the line: its token, deadline and arrival order, and whether the socket stays open once held. */
type Place = { token: string; deadline: number; seq: number; keep?: boolean };
type Resume = (Place & { req: KindWait[WaitingKindName] }) | { deadline: number; seq: number; watch: true };
type Attachment = { at: SocketAt } & SocketPhase;

/** What the sockets need of their lock object. */
export interface WaitSocketsHost {
  ctx: DurableObjectState;
  env: Env;
  part(kind: KindName): KindObjectPart<KindName>;
  /** After a wait or a holder's message (which may have written here): its store, kind and lock, and what it answered. */
  afterWait(at: SocketAt, result: unknown): void;
}

/**
 * The lock object's wait sockets (socketProtocol.ts): accepted with the
 * hibernation API, one wait each, in the same line as HTTP waiters. The
 * wait in progress is this instance's (to withdraw it when the socket
 * closes); where the socket is in its wait, and what it takes to wait
 * again, is kept in its attachment, so when the object wakes from
 * hibernation (or restarts with its sockets open) restore() puts every
 * waiting socket back in the line, in order.
 */
export class WaitSockets {
  /** The waits in progress on this instance: closing the socket aborts its wait (it leaves the line). */
  private readonly waits = new Map<WebSocket, AbortController>();
  /** Arrival order of this instance's waits (restored ones keep theirs, ahead of any new one). */
  private lastSeq = 0;

  constructor(private readonly host: WaitSocketsHost) {}

  /**
   * The object woke (after hibernation, or a restart that kept its
   * sockets): every socket that was waiting takes its place in the line
   * again, in its old order, with its old token (the store may have it
   * registered) and what is left of its wait. One that could not keep that
   * (too large to attach) is told its wait was lost.
   */
  restore(): void {
    const waiting: Array<{ ws: WebSocket; at: SocketAt; resume: Resume }> = [];
    for (const ws of this.host.ctx.getWebSockets()) {
      const state = ws.deserializeAttachment() as Attachment | null;
      if (state?.phase !== "waiting" || this.waits.has(ws)) continue;
      if (!state.resume) {
        this.fail(ws, new StoreUnavailableError("the lock object restarted while the socket waited", "not_applied"));
        continue;
      }
      waiting.push({ ws, at: state.at, resume: state.resume });
    }
    waiting.sort((a, b) => a.resume.seq - b.resume.seq);
    for (const { ws, at, resume } of waiting) {
      this.lastSeq = Math.max(this.lastSeq, resume.seq);
      const waitMs = Math.max(1, resume.deadline - Date.now());
      const resumed = "watch" in resume ? this.watchKey(ws, at, waitMs, resume) : this.startWait(ws, at, { ...resume.req, waitMs }, resume);
      resumed.catch((err) => this.fail(ws, err));
    }
  }

  /** GET .../wait from the Worker: accept the socket. */
  accept(request: Request): Response {
    let at: ReturnType<typeof socketAtSchema.safeParse>;
    try {
      at = socketAtSchema.safeParse(JSON.parse(request.headers.get(SOCKET_AT_HEADER) ?? "null"));
    } catch {
      at = socketAtSchema.safeParse(null);
    }
    if (!at.success) return Response.json({ error: "internal", message: "a wait socket without what it is for" }, { status: 500 });
    const [client, server] = Object.values(new WebSocketPair());
    this.host.ctx.acceptWebSocket(server);
    this.keep(server, { at: at.data, phase: "open" });
    return new Response(null, { status: 101, webSocket: client, headers: at.data.protocol ? { "Sec-WebSocket-Protocol": SOCKET_PROTOCOL } : {} });
  }

  message(ws: WebSocket, data: string | ArrayBuffer): void {
    const state = ws.deserializeAttachment() as Attachment | null;
    if (!state) return;
    try {
      if (typeof data !== "string") throw new InvalidInputError("invalid_body", "wait socket messages are JSON text, not binary");
      if (data.length > BODY_MAX_BYTES) throw new TooLargeError();
      const json = jsonOf(data, "message");
      const type = typeof json === "object" && json !== null && !Array.isArray(json) ? (json as { type?: unknown }).type : undefined;
      if (state.phase === "open" && type === "watch" && state.at.kind === "idempotency") {
        const { waitMs } = validated(json, watchMessage, "watch message");
        this.watchKey(ws, state.at, waitMs).catch((err) => this.fail(ws, err));
        return;
      }
      if (state.phase === "open" && type === "acquire" && state.at.kind !== "idempotency") {
        // The wait runs on; this handler returns, so the socket's other events (its close) come through.
        this.acquire(ws, state.at, json as Record<string, unknown>).catch((err) => this.fail(ws, err));
        return;
      }
      if (state.phase === "granted" && type === "ack") {
        this.ack(ws, state, validated(json, ackMessage, "ack message").token);
        return;
      }
      if (state.phase === "holding" && (type === "heartbeat" || type === "release")) {
        this.hold(ws, state, json).catch((err) => this.fail(ws, err));
        return;
      }
      if (state.phase === "waiting" && !this.waits.has(ws)) {
        throw new StoreUnavailableError("the lock object restarted while the socket waited", "not_applied");
      }
      throw new InvalidInputError(
        "invalid_body",
        state.phase !== "open"
          ? `a "${String(type)}" message is not expected now`
          : state.at.kind === "idempotency"
            ? 'the first message is {"type":"watch","waitMs":n}'
            : 'the first message is {"type":"acquire", ...}',
      );
    } catch (err) {
      this.fail(ws, err);
    }
  }

  /** The client closed the socket, or its connection failed. */
  closed(ws: WebSocket): void {
    const state = ws.deserializeAttachment() as Attachment | null;
    const wait = this.waits.get(ws);
    this.waits.delete(ws);
    // Waiting: it leaves the line now. Offered a grant it never acknowledged: the grant goes back now.
    wait?.abort();
    this.giveBackOffer(state);
    this.keep(ws, state ? { at: state.at, phase: "done" } : null);
  }

  private async acquire(ws: WebSocket, at: SocketAt, json: Record<string, unknown>): Promise<void> {
    const { type: _type, keep, ...body } = json;
    if (keep !== undefined && typeof keep !== "boolean") throw new InvalidInputError("invalid_body", "keep: must be true or false");
    const req = socketWaits[at.kind as WaitingKindName](at, body);
    if ("token" in req && req.token !== undefined) {
      throw new InvalidInputError("invalid_token", "token: a re-entry is answered at once: send it over HTTP, not a wait socket");
    }
    if (req.waitMs < 1) throw new InvalidInputError("invalid_wait", "waitMs: a wait socket waits: give at least 1 (a try-lock goes over HTTP)");
    if (req.onExpire) checkOnExpire(this.host.env, at.ref.ns, req.onExpire);
    await this.startWait(ws, at, req, { token: newOwnerToken(), deadline: Date.now() + req.waitMs, seq: ++this.lastSeq, keep: keep === true });
  }

  /** A lock kind's wait in the line, and its answer on the socket. */
  private async startWait(ws: WebSocket, at: SocketAt, req: KindWait[WaitingKindName], place: Place): Promise<void> {
    const wait = new AbortController();
    this.waits.set(ws, wait);
    this.keepWaiting(ws, at, { ...place, req });
    const part = this.host.part(at.kind);
    const outcome = await part.wait(req as never, wait.signal, { mustPickUp: true, token: place.token });
    this.host.afterWait(at, outcome);
    if (wait.signal.aborted) {
      // Gone while its answer was on the way: a grant made meanwhile goes back to the line.
      if (outcome.status === "granted") part.takeBack((outcome.grant as { token: string }).token);
      return;
    }
    this.waits.delete(ws);
    // Metrics count socket waits here, as the Worker counts HTTP ones (src/metrics.ts): the wait's time so far.
    const waited = req.waitMs - Math.max(0, place.deadline - Date.now());
    if (outcome.status === "granted" || outcome.status === "locked") {
      writeMetric(this.host.env, at.ref.ns, at.kind, outcome.status === "granted" ? "grant" : "busy", waited);
    }
    if (outcome.status === "granted") {
      const token = (outcome.grant as { token: string }).token;
      this.keep(ws, { at, phase: "granted", token, keep: place.keep });
      this.send(ws, { type: "granted", grant: outcome.grant });
      return;
    }
    if (outcome.status === "locked") {
      this.end(ws, { type: "timeout", retryAfterMs: outcome.retryAfterMs });
      return;
    }
    try {
      grantOf(outcome);
      throw new InternalError("a wait answered neither a grant nor a refusal");
    } catch (err) {
      this.fail(ws, err);
    }
  }

  /** An idempotency key's wait socket: the end of another caller's run (IdempotencyObjectPart.awaitEnd). */
  private async watchKey(ws: WebSocket, at: SocketAt, waitMs: number, place?: Resume): Promise<void> {
    const part = this.host.part("idempotency") as unknown as IdempotencyObjectPart;
    const wait = new AbortController();
    this.waits.set(ws, wait);
    this.keepWaiting(ws, at, { deadline: Date.now() + waitMs, seq: place?.seq ?? ++this.lastSeq, watch: true });
    const end = await part.awaitEnd(at.ref, at.store, waitMs, wait.signal);
    this.waits.delete(ws);
    if (wait.signal.aborted) return;
    if (end.state === "completed") this.end(ws, { type: "completed", response: end.response, completedAt: end.completedAt, fence: end.fence });
    else if (end.state === "absent") this.end(ws, { type: "free" });
    else this.end(ws, { type: "timeout", retryAfterMs: end.retryAfterMs });
  }

  private ack(ws: WebSocket, state: Attachment & { phase: "granted" }, token: string): void {
    if (token !== state.token) throw new InvalidInputError("invalid_token", "token: the ack names a token this socket was not granted");
    const part = this.host.part(state.at.kind);
    if (part.wasTakenBack(token)) {
      this.end(ws, {
        type: "error",
        status: 409,
        error: "lease_lost",
        message: "the grant was not acknowledged in time and went to the next waiter",
      });
      return;
    }
    part.pickedUp(token);
    if (!state.keep) {
      this.end(ws, { type: "held" });
      return;
    }
    this.keep(ws, { at: state.at, phase: "holding", token });
    this.send(ws, { type: "held" });
  }

  /**
   * A holder that kept its socket (`keep`): a heartbeat is answered and the
   * socket stays; a release is answered and the socket closes. The release
   * is done here, so the next waiter is handed the lock with no Worker in
   * between.
   */
  private async hold(ws: WebSocket, state: Attachment & { phase: "holding" }, json: unknown): Promise<void> {
    const message = validated(json, holderMessage, "holder message");
    const part = this.host.part(state.at.kind);
    if (!part.heartbeatHere || !part.releaseHere) throw new InternalError(`the ${state.at.kind} has no socket holder`);
    const r =
      message.type === "heartbeat"
        ? await part.heartbeatHere(state.at.ref, state.at.store, state.token, message.ttlMs)
        : await part.releaseHere(state.at.ref, state.at.store, state.token);
    this.host.afterWait(state.at, r);
    if (r.status === "lost") throw new LeaseLostError();
    if (message.type === "heartbeat") this.send(ws, { type: "heartbeat", ...r.answer } as SocketAnswer);
    else this.end(ws, { type: "released", ...r.answer });
  }

  /** A typed error as the socket's last message: the status and body HTTP would answer (errorAnswer). */
  private fail(ws: WebSocket, err: unknown): void {
    const { status, body } = errorAnswer(err);
    this.end(ws, { type: "error", status, ...body });
  }

  /** The socket's last message, then a normal close. */
  private end(ws: WebSocket, answer: SocketAnswer): void {
    const state = ws.deserializeAttachment() as Attachment | null;
    // Ended while offered a grant it did not take (a bad ack, a bug): the grant goes back now, not after the pickup time.
    this.giveBackOffer(state);
    this.keep(ws, state ? { at: state.at, phase: "done" } : null);
    this.send(ws, answer);
    try {
      ws.close(1000, answer.type);
    } catch {
      // Already closing: the client went first.
    }
  }

  /** A socket offered a grant it did not acknowledge: the grant goes back to the line (a no-op once it was picked up). */
  private giveBackOffer(state: Attachment | null): void {
    if (state?.phase === "granted") this.host.part(state.at.kind).takeBack(state.token);
  }

  private send(ws: WebSocket, answer: SocketAnswer): void {
    try {
      ws.send(JSON.stringify(answer));
    } catch {
      // The client is gone: its close event withdraws what it had.
    }
  }

  /** A waiting socket's attachment, with what it takes to resume; without it when that is too large to attach (2 KiB). */
  private keepWaiting(ws: WebSocket, at: SocketAt, resume: Resume): void {
    try {
      ws.serializeAttachment({ at, phase: "waiting", resume } satisfies Attachment);
    } catch {
      this.keep(ws, { at, phase: "waiting" });
    }
  }

  private keep(ws: WebSocket, state: Attachment | null): void {
    try {
      ws.serializeAttachment(state);
    } catch {
      // A closed socket keeps nothing.
    }
  }

  static isSocketRequest(request: Request): boolean {
    return request.headers.has(SOCKET_AT_HEADER);
  }
}
