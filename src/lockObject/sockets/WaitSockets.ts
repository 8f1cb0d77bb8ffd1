import type { Env } from "../../env.js";
import { InvalidInputError, LockedError, StoreUnavailableError } from "../../errors.js";
import { type CheckedAcquire, validated } from "../../wire/parse.js";
import type { KindName } from "../../store/kinds.js";
import { checkRateLimit, tierOf } from "../../admission/rateLimit.js";
import { newOwnerToken } from "../../tokens.js";
import { checkOnExpire } from "../../wire/onExpireTarget.js";
import type * as z from "zod/mini";
import type { KindObjectPart } from "../KindObjectPart.js";
import type { AcquireBody } from "../ObjectKinds.js";
import type { Line } from "../line/Line.js";
import type { Waiters } from "../line/Waiters.js";
import type { WaitRequest } from "../line/waitProtocol.js";
import { MessageGate } from "./messageGate.js";
import { type Attachment, keepAttachment, keepWaiting, type Place, type Resume, sendAnswer, waitsToRestore } from "./socketAttachment.js";
import { renewWait, waitOnSocket } from "./socketWait.js";
import { acknowledge, holdOnSocket, type SocketHolderHost } from "./socketHolder.js";
import { checkTokenLife } from "../tokenLife.js";
import type { SocketCaps } from "./socketCaps.js";
import type { ObjectTimers } from "../timers.js";
import { OpenSockets } from "./openSockets.js";
import { ackMessage, awaitEndMessage, renewMessage, type SocketAt, waitSocketMessageOf } from "./socketSchemas.js";

/** What the sockets need of their lock object. */
export interface WaitSocketsHost {
  ctx: DurableObjectState;
  env: Env;
  part(kind: KindName): KindObjectPart;
  /** The object's line for the kind (Line.ts). */
  line(kind: KindName): Line;
  /** The kind's acquire body's schema (ObjectKind.acquireBody); undefined for a kind whose wait socket takes no acquire. */
  acquireBody(kind: KindName): z.ZodMiniType<AcquireBody> | undefined;
  /** After a wait or a holder's message (which may have written here): its store, kind and lock, and what it answered. */
  afterWait(at: SocketAt, result: unknown): void;
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
  /** The sockets' life, as a watch socket's (openSockets.ts): accepted, limited while idle, ended, counted out. */
  private readonly sockets: OpenSockets;
  /** What a socket holder's messages need of the sockets (socketHolder.ts). */
  private readonly holding: SocketHolderHost = {
    part: (kind) => this.host.part(kind),
    line: (kind) => this.host.line(kind),
    afterWait: (at, result) => this.host.afterWait(at, result),
    told: (at) => this.host.caps.tell(at, true),
    end: (ws, answer) => this.sockets.end(ws, answer),
    limitIdle: (ws, state) => this.sockets.limitIdle(ws, state),
  };
  /** Arrival order of this instance's waits (restored ones keep theirs, ahead of any new one). */
  private lastSeq = 0;

  constructor(private readonly host: WaitSocketsHost) {
    this.sockets = new OpenSockets(host, {
      firstIsWatch: (at) => this.awaitsEnd(at),
      finished: (ws, before) => this.finished(ws, before),
    });
  }

  /**
   * The object woke (after hibernation, or a restart that kept its
   * sockets): every socket that was waiting takes its place in the line
   * again, in its old order, with its old token (the store may have it
   * registered) and what is left of its wait. One that could not keep that
   * (too large to attach) is told its wait was lost.
   */
  restore(): void {
    const sockets = this.sockets.restore();
    const { waiting, lost } = waitsToRestore(sockets.filter((ws) => !this.host.waiters.has(ws)));
    for (const ws of lost) this.sockets.fail(ws, new StoreUnavailableError("the lock object restarted while the socket waited", "not_applied"));
    for (const { ws, at, resume } of waiting) {
      this.lastSeq = Math.max(this.lastSeq, resume.seq);
      const waitMs = Math.max(1, resume.deadline - Date.now());
      const resumed =
        "awaitsEnd" in resume ? this.awaitEnd(ws, at, waitMs, resume) : this.waitInLine(ws, at, resume, { ...resume.req, waitMs }, true);
      resumed.catch((err) => this.sockets.fail(ws, err));
    }
  }

  /** GET .../wait from the Worker: accept the socket, unless a cap refuses it (a plain HTTP answer, before any socket). */
  async accept(request: Request): Promise<Response> {
    return (await this.sockets.accept(request)).response;
  }

  /** Wait sockets open here that are not done (waiting, offered a grant, holding, or yet to say what for). */
  get liveCount(): number {
    return this.sockets.live.size;
  }

  /** Whether the kind's wait socket awaits a state's end (its part's ending) rather than a grant. */
  private awaitsEnd(at: SocketAt): boolean {
    return this.host.part(at.kind).ending !== undefined;
  }

  /**
   * A message: one at a time, within the socket's rate (messageGate.ts) and
   * its namespace's request budget, each counted as one request. A socket
   * over either is answered 429 `rate_limited` and closed. Messages that
   * reach a socket already ended are dropped unread.
   */
  message(ws: WebSocket, data: string | ArrayBuffer): void {
    const state = this.sockets.current(ws);
    if (!state) return;
    let gate = this.gates.get(ws);
    if (!gate) {
      gate = new MessageGate();
      this.gates.set(ws, gate);
    }
    let handled: Promise<void>;
    try {
      handled = gate.run(() => this.handle(ws, data));
    } catch (err) {
      // Faster than a socket may send: ended now, and its client refused new sockets for a while (admission/floodPenalties.ts).
      this.host.caps.penalize(state.at);
      this.sockets.fail(ws, err);
      return;
    }
    handled.catch((err) => this.sockets.fail(ws, err));
  }

  private async handle(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    const before = this.sockets.current(ws);
    if (!before) return;
    checkTokenLife(before.at);
    await checkRateLimit(this.host.env, before.at.ref.ns, before.at.tier ?? tierOf(this.host.env.RATE_LIMIT_TIERS, before.at.ref.ns));
    // Read again: the socket may have moved on (or ended) while the budget was asked.
    const state = this.sockets.current(ws);
    if (!state) return;
    const awaitsEnd = this.awaitsEnd(state.at);
    // Read in one call, with the kind's acquire body checked when the socket expects its acquire (as HTTP checks it).
    const { json, type, acquire } = waitSocketMessageOf(
      data,
      state.phase === "open" && !awaitsEnd ? this.host.acquireBody(state.at.kind) : undefined,
    );
    if (state.phase === "open" && type === "watch" && awaitsEnd) {
      const { waitMs } = validated(json, awaitEndMessage, "watch message");
      // The wait runs on; the next message is judged by the phase it leaves.
      this.awaitEnd(ws, state.at, waitMs).catch((err) => this.sockets.fail(ws, err));
      return;
    }
    if (state.phase === "open" && type === "acquire" && !awaitsEnd) {
      // The wait runs on; this handler returns, so the socket's other events (its close) come through.
      if (!acquire) throw new InvalidInputError("invalid_body", `a ${state.at.kind} wait socket takes no acquire`);
      this.acquire(ws, state.at, acquire).catch((err) => this.sockets.fail(ws, err));
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

  /**
   * An acquire message, checked (waitSocketMessageOf: the kind's HTTP acquire body, by its schema): with
   * the socket's lock, the kind's request to the line; then the wait.
   */
  private async acquire(ws: WebSocket, at: SocketAt, { keep, body }: CheckedAcquire<AcquireBody>): Promise<void> {
    if (body.onExpire !== undefined) checkOnExpire(this.host.env, at.ref.ns, body.onExpire);
    const req: WaitRequest = { ...body, kind: at.kind, store: at.store, ref: at.ref, ...(at.mode ? { mode: at.mode } : {}) };
    await this.waitInLine(ws, at, { token: newOwnerToken(), seq: ++this.lastSeq, keep }, req);
  }

  /** A lock kind's wait in the line inside this object (socketWait.ts); its answer on the socket. */
  private async waitInLine(ws: WebSocket, at: SocketAt, place: Place, req: WaitRequest, registered = false): Promise<void> {
    const line = this.host.line(at.kind);
    const wait = this.host.waiters.join(ws, "socket");
    let answer: Awaited<ReturnType<typeof waitOnSocket>>;
    try {
      const afterWait = (outcome: unknown) => this.host.afterWait(at, outcome);
      answer = await waitOnSocket({ env: this.host.env, ws, at, place, registered, line, afterWait }, req, wait.signal);
    } catch (err) {
      if (wait.signal.aborted) return;
      this.host.waiters.leave(ws);
      if (!(err instanceof LockedError)) throw err;
      this.sockets.end(ws, { type: "timeout", retryAfterMs: err.retryAfterMs });
      return;
    }
    if (wait.signal.aborted) {
      // Gone while its answer was on the way: the grant goes back to the line.
      if (answer.pickup) line.takeBack(answer.grant.token);
      return;
    }
    this.host.waiters.leave(ws);
    const { token, ttlMs } = answer.grant;
    const offered: Attachment = { at, phase: "granted", token, keep: place.keep, offeredAt: Date.now(), ttlMs };
    keepAttachment(ws, offered);
    sendAnswer(ws, { type: "granted", grant: answer.grant });
    this.sockets.limitIdle(ws, offered);
  }

  /** A wait socket that awaits a state's end (an idempotency key's run): the line's awaitEnd answers it, with the kind's own answer. */
  private async awaitEnd(ws: WebSocket, at: SocketAt, waitMs: number, place?: Resume): Promise<void> {
    if (!this.awaitsEnd(at)) throw new InvalidInputError("invalid_body", `a ${at.kind} wait socket awaits no end`);
    const wait = this.host.waiters.join(ws, "socket");
    keepWaiting(ws, at, { deadline: Date.now() + waitMs, seq: place?.seq ?? ++this.lastSeq, awaitsEnd: true });
    const end = await this.host.line(at.kind).awaitEnd(at.ref, at.store, waitMs, wait.signal);
    this.host.waiters.leave(ws);
    if (wait.signal.aborted) return;
    this.sockets.end(ws, end);
  }

  /** The client closed the socket, or its connection failed: counted out now (see finished). */
  closed(ws: WebSocket): void {
    this.sockets.finish(ws);
  }

  /**
   * A socket's wait is over, whoever ended it (its client closed it or its connection failed, or this object ended
   * it): waiting, it leaves the line now (a client that ignores the close must not keep its place); a grant it was
   * offered and did not take goes back now (not after the pickup time).
   */
  private finished(ws: WebSocket, before: Attachment | null): void {
    const wait = this.host.waiters.get(ws);
    this.host.waiters.leave(ws);
    wait?.abort();
    if (before?.phase === "granted") this.host.line(before.at.kind).takeBack(before.token);
    this.gates.delete(ws);
  }
}
