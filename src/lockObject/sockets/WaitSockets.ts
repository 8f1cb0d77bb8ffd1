import type { Env } from "../../env.js";
import { InvalidInputError, LockedError, StoreUnavailableError } from "../../errors.js";
import { validated } from "../../wire/parse.js";
import type { KindName } from "../../store/kinds.js";
import { checkRateLimit, tierOf } from "../../namespaceObject/rateLimit.js";
import { newOwnerToken } from "../../tokens.js";
import type { KindObjectPart } from "../KindObjectPart.js";
import type { Line } from "../line/Line.js";
import type { Waiters } from "../line/Waiters.js";
import { MessageGate } from "./messageGate.js";
import { EndedSockets } from "./endedSockets.js";
import {
  type Attachment,
  attachmentOf,
  closeWith,
  errorAsAnswer,
  keepAttachment,
  keepWaiting,
  type Place,
  type Resume,
  sendAnswer,
  waitsToRestore,
} from "./socketAttachment.js";
import { renewWait, type SocketAcquire, type SocketAsk, socketLine } from "./socketLine.js";
import type { LockStore } from "../../store/types.js";
import type { StoreKind } from "../line/waitProtocol.js";
import { acknowledge, holdOnSocket, type SocketHolderHost } from "./socketHolder.js";
import { limitIdle } from "./socketIdleLimits.js";
import { checkTokenLife } from "../tokenLife.js";
import { refusal, type SocketCaps } from "./socketCaps.js";
import type { ObjectTimers } from "../timers.js";
import { SOCKET_PROTOCOL, type SocketAnswer } from "../../wire/socketProtocol.js";
import { acquireMessage } from "../../wire/socketMessages.js";
import { ackMessage, renewMessage, type SocketAt, socketAtOf, socketMessageOf, watchMessage } from "./socketSchemas.js";

/** What the sockets need of their lock object. */
export interface WaitSocketsHost {
  ctx: DurableObjectState;
  env: Env;
  part(kind: KindName): KindObjectPart;
  /** The object's line for the kind (Line.ts). */
  line(kind: KindName): Line;
  /** What a wait socket of the kind does: acquire from the line, or await the end of another caller's run (ObjectKind.socket). */
  socketMode(kind: KindName): "acquire" | "awaitEnd";
  /** After a wait or a holder's message (which may have written here): its store, kind and lock, and what it answered. */
  afterWait(at: SocketAt, result: unknown): void;
  /** A waiting kind's acquire, through its service and the acquire flow, as over HTTP (handed in: ObjectKinds.socketAcquire). */
  acquire: SocketAcquire;
  /** The store a socket's lock is on (Redis from the object's own configuration, or its own storage). */
  storeOf(kind: StoreKind): LockStore;
  /** The object's timers: the idle limits' (a kept socket's lease end may be far off: on the alarm). */
  timers: ObjectTimers;
  /** The caps on waiters and on the namespace's sockets (socketCaps.ts). */
  caps: SocketCaps;
  /** Every wait in progress here, HTTP and socket alike (line/Waiters.ts): a socket's wait is withdrawn when it closes. */
  waiters: Waiters;
}

/**
 * The lock object's wait sockets (socketMessages.ts): accepted with the hibernation API, one wait each, in
 * the same line as HTTP waiters. Where a socket is in its wait, and what it takes to wait again, is kept in
 * its attachment, so a woken object (restore) puts every waiting socket back in the line, in order.
 */
export class WaitSockets {
  /** Each socket's messages, one at a time and no faster than allowed (messageGate.ts). */
  private readonly gates = new Map<WebSocket, MessageGate>();
  /** Sockets this instance ended: what still arrives on them is dropped unread (a flooder that writes on: endedSockets.ts). */
  private readonly ended: EndedSockets;
  /** Sockets open here and not done, for the caps: kept as they come and go (counting attachments cost O(n) per join). */
  private readonly live = new Set<WebSocket>();
  /** What a socket holder's messages need of the sockets (socketHolder.ts). */
  private readonly holding: SocketHolderHost = {
    part: (kind) => this.host.part(kind),
    line: (kind) => this.host.line(kind),
    afterWait: (at, result) => this.host.afterWait(at, result),
    told: (at) => this.host.caps.tell(at, true),
    end: (ws, answer) => this.end(ws, answer),
    limitIdle: (ws, state) => this.limitIdle(ws, state),
  };
  /** Arrival order of this instance's waits (restored ones keep theirs, ahead of any new one). */
  private lastSeq = 0;

  constructor(private readonly host: WaitSocketsHost) {
    this.ended = new EndedSockets(host.ctx, host.caps, () => this.live);
  }

  /**
   * The object woke (after hibernation, or a restart that kept its
   * sockets): every socket that was waiting takes its place in the line
   * again, in its old order, with its old token (the store may have it
   * registered) and what is left of its wait. One that could not keep that
   * (too large to attach) is told its wait was lost.
   */
  restore(): void {
    const sockets = this.host.ctx.getWebSockets();
    for (const ws of sockets) {
      const state = attachmentOf(ws);
      if (state && state.phase !== "done") this.live.add(ws);
      // Its idle limit was a timer of the instance that went: set again, for what is left of it.
      if (state) this.limitIdle(ws, state);
    }
    const { waiting, lost } = waitsToRestore(sockets.filter((ws) => !this.host.waiters.has(ws)));
    for (const ws of lost) this.fail(ws, new StoreUnavailableError("the lock object restarted while the socket waited", "not_applied"));
    for (const { ws, at, resume } of waiting) {
      this.lastSeq = Math.max(this.lastSeq, resume.seq);
      const waitMs = Math.max(1, resume.deadline - Date.now());
      const resumed =
        "watch" in resume ? this.watchKey(ws, at, waitMs, resume) : this.waitOnSocket(ws, at, resume, { resume: { ...resume.req, waitMs } });
      resumed.catch((err) => this.fail(ws, err));
    }
  }

  /** GET .../wait from the Worker: accept the socket, unless a cap refuses it (a plain HTTP answer, before any socket). */
  async accept(request: Request): Promise<Response> {
    const at = socketAtOf(request);
    if (!at) return Response.json({ error: "internal", message: "a wait socket without what it is for" }, { status: 500 });
    const admitted = await this.host.caps.admitSocket(at);
    if ("refused" in admitted) return refusal(admitted.refused);
    const [client, server] = Object.values(new WebSocketPair());
    try {
      this.host.ctx.acceptWebSocket(server);
      this.live.add(server);
    } finally {
      admitted.room.settle();
    }
    const state: Attachment = { at, phase: "open", since: Date.now() };
    keepAttachment(server, state);
    this.limitIdle(server, state);
    return new Response(null, { status: 101, webSocket: client, headers: at.protocol ? { "Sec-WebSocket-Protocol": SOCKET_PROTOCOL } : {} });
  }

  /** Wait sockets open here that are not done (waiting, offered a grant, holding, or yet to say what for). */
  get liveCount(): number {
    return this.live.size;
  }

  /**
   * A message: one at a time, within the socket's rate (messageGate.ts) and
   * its namespace's request budget, each counted as one request. A socket
   * over either is answered 429 `rate_limited` and closed. Messages that
   * reach a socket already ended are dropped unread.
   */
  message(ws: WebSocket, data: string | ArrayBuffer): void {
    if (this.ended.dropped(ws)) return;
    const state = attachmentOf(ws);
    if (!state || state.phase === "done") return;
    let gate = this.gates.get(ws);
    if (!gate) {
      gate = new MessageGate();
      this.gates.set(ws, gate);
    }
    let handled: Promise<void>;
    try {
      handled = gate.run(() => this.handle(ws, data));
    } catch (err) {
      // Faster than a socket may send: ended now, and its client refused new sockets for a while (floodPenalties.ts).
      this.host.caps.penalize(state.at);
      this.fail(ws, err);
      return;
    }
    handled.catch((err) => this.fail(ws, err));
  }

  private async handle(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    const before = attachmentOf(ws);
    if (!before || before.phase === "done") return;
    checkTokenLife(before.at);
    await checkRateLimit(this.host.env, before.at.ref.ns, before.at.tier ?? tierOf(this.host.env.RATE_LIMIT_TIERS, before.at.ref.ns));
    // Read again: the socket may have moved on (or ended) while the budget was asked.
    const state = attachmentOf(ws);
    if (!state || state.phase === "done") return;
    const { json, type } = socketMessageOf(data, "wait");
    const awaitsEnd = this.host.socketMode(state.at.kind) === "awaitEnd";
    if (state.phase === "open" && type === "watch" && awaitsEnd) {
      const { waitMs } = validated(json, watchMessage, "watch message");
      // The watch runs on; the next message is judged by the phase it leaves.
      this.watchKey(ws, state.at, waitMs).catch((err) => this.fail(ws, err));
      return;
    }
    if (state.phase === "open" && type === "acquire" && !awaitsEnd) {
      // The wait runs on; this handler returns, so the socket's other events (its close) come through.
      this.acquire(ws, state.at, json as Record<string, unknown>).catch((err) => this.fail(ws, err));
      return;
    }
    if (state.phase === "granted" && type === "ack") {
      acknowledge(this.holding, ws, state, validated(json, ackMessage, "ack message").token);
      return;
    }
    if (state.phase === "holding" && (type === "heartbeat" || type === "release")) {
      await holdOnSocket(this.holding, ws, state, json);
      return;
    }
    if (state.phase === "waiting" && !this.host.waiters.has(ws)) {
      throw new StoreUnavailableError("the lock object restarted while the socket waited", "not_applied");
    }
    // A renew that crossed its grant on the way is late, not wrong: dropped.
    if (type === "renew" && (this.host.waiters.has(ws) || state.phase === "granted"))
      return renewWait(ws, validated(json, renewMessage, "renew").waitMs);
    throw new InvalidInputError(
      "invalid_body",
      state.phase !== "open"
        ? `a "${String(type)}" message is not expected now`
        : awaitsEnd
          ? 'the first message is {"type":"watch","waitMs":n}'
          : 'the first message is {"type":"acquire", ...}',
    );
  }

  private async acquire(ws: WebSocket, at: SocketAt, json: Record<string, unknown>): Promise<void> {
    // The acquire message is the kind's HTTP acquire body plus its type and keep (src/wire/socketMessages.ts).
    const { type: _type, keep, ...message } = validated(json, acquireMessage, "acquire message");
    await this.waitOnSocket(ws, at, { token: newOwnerToken(), seq: ++this.lastSeq, keep: keep === true }, { message });
  }

  /**
   * A lock kind's wait, through the kind's service and the acquire flow (the
   * same checks, metrics and line as an HTTP acquire), in the line inside this
   * object (socketLine.ts); its answer on the socket.
   */
  private async waitOnSocket(ws: WebSocket, at: SocketAt, place: Place, ask: SocketAsk): Promise<void> {
    const line = socketLine(this.host.line(at.kind), ws, at, place, (outcome) => this.host.afterWait(at, outcome));
    const call = { env: this.host.env, at, store: this.host.storeOf(at.store), line, waitUntil: (p: Promise<unknown>) => this.host.ctx.waitUntil(p) };
    const wait = this.host.waiters.join(ws, "socket");
    let answer: Awaited<ReturnType<SocketAcquire>>;
    try {
      answer = await this.host.acquire(call, ask, wait.signal);
    } catch (err) {
      if (wait.signal.aborted) return;
      this.host.waiters.leave(ws);
      if (!(err instanceof LockedError)) throw err;
      this.end(ws, { type: "timeout", retryAfterMs: err.retryAfterMs });
      return;
    }
    if (wait.signal.aborted) {
      // Gone while its answer was on the way: the grant goes back to the line.
      void answer.delivery?.takeBack();
      return;
    }
    this.host.waiters.leave(ws);
    const { token, ttlMs } = answer.grant;
    const offered: Attachment = { at, phase: "granted", token, keep: place.keep, offeredAt: Date.now(), ttlMs };
    keepAttachment(ws, offered);
    sendAnswer(ws, { type: "granted", grant: answer.grant });
    this.limitIdle(ws, offered);
  }

  /** A wait socket that awaits the end of another caller's run (an idempotency key's): the part's awaitEnd answers it. */
  private async watchKey(ws: WebSocket, at: SocketAt, waitMs: number, place?: Resume): Promise<void> {
    const part = this.host.part(at.kind);
    if (!part.awaitEnd) throw new InvalidInputError("invalid_body", `a ${at.kind} wait socket awaits no run`);
    const wait = this.host.waiters.join(ws, "socket");
    keepWaiting(ws, at, { deadline: Date.now() + waitMs, seq: place?.seq ?? ++this.lastSeq, watch: true });
    const end = await part.awaitEnd(at.ref, at.store, waitMs, wait.signal);
    this.host.waiters.leave(ws);
    if (wait.signal.aborted) return;
    this.end(ws, end);
  }

  /** The socket's idle limit in its phase (socketIdleLimits.ts), ending it with its last message. */
  private limitIdle(ws: WebSocket, state: Attachment): void {
    limitIdle(ws, state, this.host.timers, (socket, err) => this.fail(socket, err), this.host.socketMode(state.at.kind) === "awaitEnd");
  }

  /** A typed error as the socket's last message: the status and body HTTP would answer (errorAnswer). */
  private fail(ws: WebSocket, err: unknown): void {
    this.end(ws, errorAsAnswer(err));
  }

  /** The socket's last message, then a normal close. */
  private end(ws: WebSocket, answer: SocketAnswer): void {
    this.closed(ws);
    closeWith(ws, answer);
  }

  /**
   * A socket's wait is over, whoever ended it (its client closed it or its connection failed, or this object ended
   * it): waiting, it leaves the line now (a client that ignores the close must not keep its place); a grant it was
   * offered and did not take goes back now (not after the pickup time); it is done (what still arrives on it is
   * dropped), and its namespace object hears of it.
   */
  closed(ws: WebSocket): void {
    const wait = this.host.waiters.get(ws);
    this.host.waiters.leave(ws);
    wait?.abort();
    const state = attachmentOf(ws);
    this.takeBackOffer(state);
    keepAttachment(ws, state ? { at: state.at, phase: "done" } : null);
    this.gates.delete(ws);
    this.ended.add(ws);
    this.live.delete(ws);
    if (state && state.phase !== "done") this.host.caps.tell(state.at);
  }

  /** A socket offered a grant it did not acknowledge: the grant goes back to the line (a no-op once it was picked up). */
  private takeBackOffer(state: Attachment | null): void {
    if (state?.phase === "granted") this.host.line(state.at.kind).takeBack(state.token);
  }
}
