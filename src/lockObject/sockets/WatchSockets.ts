import type { Env } from "../../env.js";
import { InvalidInputError } from "../../errors.js";
import { logError } from "../../logError.js";
import { validated } from "../../wire/parse.js";
import { checkRateLimit, tierOf } from "../../admission/rateLimit.js";
import type { SocketCaps } from "./socketCaps.js";
import { checkTokenLife } from "../tokenLife.js";
import { type Attachment, attachmentOf, keepAttachment, sendAnswer } from "./socketAttachment.js";
import { OpenSockets } from "./openSockets.js";
import { type SocketAt, socketAtOf, socketMessageOf } from "./socketSchemas.js";
import { watchStartMessage } from "../../wire/socketMessages.js";
import type { ObjectTimers } from "../timers.js";
import type { StoreKind } from "../line/waitProtocol.js";
import { WatchMarker } from "./watchMarker.js";
import type { LockStore } from "../../store/types.js";
import type { WatchedRead } from "../ObjectKinds.js";
import { errorAnswer } from "../../wire/errorAnswer.js";

/** The runtime's tag on watch sockets, so a woken object tells them from its wait sockets. */
const WATCH_TAG = "watch";
/** A state read that failed (the store did not answer) is tried again this much later. */
const RETRY_MS = 1000;
/** A lease end the store has not reached yet by its own clock is looked at again this often. */
const CLOCK_LAG_MS = 25;

/** What the watch sockets need of their lock object. */
export interface WatchSocketsHost {
  ctx: DurableObjectState;
  env: Env;
  /** The lock's state as its GET answers it, read now from the socket's store; with `since`, and the kind's history after it. */
  read(at: SocketAt, since: number | undefined): Promise<WatchedRead>;
  timers: ObjectTimers;
  caps: SocketCaps;
  /** The store a watcher's key is kept in (watchMarker.ts: Redis). */
  storeOf(kind: StoreKind): LockStore;
}

/**
 * Watch sockets (GET .../watch; socketProtocol.ts): each pushes the lock's
 * state when it changes, without a place in line. The object calls
 * changed() after anything that may have moved the state (an operation on
 * the Durable store, a note from the Worker of a write on Redis, a wait's
 * end, the line growing or shrinking); one read of the state then serves
 * every watcher, and only those whose last state differs are sent it. The
 * lease's end is the one timer, the object's, never one per watcher. What a
 * watcher was last sent is the digest in its attachment, so a woken object
 * pushes only what changed while it slept. No watchers: nothing is read.
 * A watcher opened at a position (?since=N, a kind whose part keeps a
 * history: ObjectKinds.ts watchedHistory) also keeps the last position it
 * was sent, and each push to it carries the changes after that one: the
 * same one read serves it (the history after the lowest such position), and
 * the socket alone gives it every change in order.
 */
export class WatchSockets {
  /** The sockets' life, as a wait socket's (openSockets.ts): accepted, limited while idle, ended, counted out. */
  private readonly sockets: OpenSockets;
  /** Every watch socket this instance knows of, done or not: its events go here, not to the wait sockets. */
  private readonly mine = new WeakSet<WebSocket>();
  /** Sockets whose one message is being handled: another on them meanwhile ends them at once. */
  private readonly starting = new WeakSet<WebSocket>();
  private reading = false;
  private again = false;
  private cancelRecheck: (() => void) | undefined;
  /** The lock's watchers key in Redis, so the Worker tells this object of its writes only while someone watches. */
  private readonly marker: WatchMarker;

  constructor(private readonly host: WatchSocketsHost) {
    this.marker = new WatchMarker(host);
    this.sockets = new OpenSockets(host, {
      tag: WATCH_TAG,
      firstIsWatch: () => true,
      finished: () => {
        this.marker.update(this.live);
        if (!this.live.size) this.recheckIn(undefined);
      },
    });
  }

  /** Watch sockets open here and not done (for the caps, and the sockets a change is pushed to). */
  private get live(): Set<WebSocket> {
    return this.sockets.live;
  }

  /** GET .../watch from the Worker (its at says watch). */
  static isWatchRequest(request: Request): boolean {
    return socketAtOf(request)?.watch === true;
  }

  has(ws: WebSocket): boolean {
    return this.mine.has(ws);
  }

  get liveCount(): number {
    return this.live.size;
  }

  /** Accept the socket, unless its position or a cap refuses it: the same caps as a wait socket's (socketCaps.ts). */
  async accept(request: Request): Promise<Response> {
    const refused = await this.positionRefused(socketAtOf(request));
    if (refused) return refused;
    const accepted = await this.sockets.accept(request);
    if ("ws" in accepted) {
      this.mine.add(accepted.ws);
      this.marker.update(this.live);
    }
    return accepted.response;
  }

  /**
   * A watch at a position (?since=N) is refused before any socket (a plain HTTP answer, nothing changed)
   * where the lock keeps no history, or N is beyond its last position (nobody can have seen that one).
   */
  private async positionRefused(at: SocketAt | undefined): Promise<Response | undefined> {
    if (at?.since === undefined) return undefined;
    try {
      const { history } = await this.host.read(at, at.since);
      if (!history) throw new InvalidInputError("invalid_position", "this lock keeps no history of changes: its watch takes no position");
      if (at.since > history.position) {
        throw new InvalidInputError("invalid_position", `since ${at.since} is beyond the last position, ${history.position}`);
      }
      return undefined;
    } catch (err) {
      const { status, body } = errorAnswer(err);
      return Response.json(body, { status });
    }
  }

  /** Woken (after hibernation or a restart): the watch sockets are found by their tag, and read for what changed meanwhile. */
  restore(): void {
    for (const ws of this.sockets.restore()) this.mine.add(ws);
    this.marker.update(this.live);
    this.changed();
  }

  /**
   * A message: the first, {"type":"watch"}, counted against the namespace's
   * budget as a wait socket's are, starts the pushes; anything else ends the socket.
   */
  message(ws: WebSocket, data: string | ArrayBuffer): void {
    const state = this.sockets.current(ws);
    if (!state) return;
    // A second message (or one while the first is still being handled) ends the socket at once, before any
    // budget is asked: a socket that floods costs one answer, not a budget call per frame.
    if (state.phase !== "open" || this.starting.has(ws)) {
      this.fail(ws, new InvalidInputError("invalid_body", 'a watch socket takes one message, {"type":"watch"}'));
      return;
    }
    this.starting.add(ws);
    this.start(ws, state, data)
      .catch((err) => this.fail(ws, err))
      .finally(() => this.starting.delete(ws));
  }

  private async start(ws: WebSocket, state: Attachment, data: string | ArrayBuffer): Promise<void> {
    checkTokenLife(state.at);
    await checkRateLimit(this.host.env, state.at.ref.ns, state.at.tier ?? tierOf(this.host.env.RATE_LIMIT_TIERS, state.at.ref.ns));
    validated(socketMessageOf(data, "watch").json, watchStartMessage, "watch message");
    // Ended while its budget was asked (closed, or a second message came): nothing to start.
    if (this.sockets.isEnded(ws)) return;
    keepAttachment(ws, { at: state.at, phase: "watching", position: state.at.since });
    this.changed();
  }

  /** The client closed the socket, or its connection failed: it is counted out now. */
  closed(ws: WebSocket): void {
    this.sockets.finish(ws);
  }

  /** The lock's state may have changed: read it once for every watcher (coalesced while a read runs). */
  changed(): void {
    if (!this.live.size) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    this.push()
      .catch((err) => {
        logError("a watched lock's state could not be read; trying again", err);
        this.recheckIn(RETRY_MS);
      })
      .finally(() => {
        this.reading = false;
        if (this.again) {
          this.again = false;
          this.changed();
        }
      });
  }

  private async push(): Promise<void> {
    await this.marker.settled; // a change written after the key is set is told: the state is read after it
    const byStore = new Map<StoreKind, { at: SocketAt; sockets: WebSocket[]; since?: number }>();
    let nextEnd = Infinity;
    for (const ws of this.live) {
      const s = attachmentOf(ws);
      if (s?.phase !== "watching") continue;
      if (s.at.until !== undefined) {
        // A token's watcher ends when its token does: nothing is pushed to it after (tokenLife.ts).
        try {
          checkTokenLife(s.at);
        } catch (err) {
          this.fail(ws, err);
          continue;
        }
        nextEnd = Math.min(nextEnd, s.at.until);
      }
      const group = byStore.get(s.at.store) ?? { at: s.at, sockets: [] };
      group.sockets.push(ws);
      // One read serves every watcher: the history after the lowest position any of them was sent.
      if (s.position !== undefined) group.since = Math.min(group.since ?? s.position, s.position);
      byStore.set(s.at.store, group);
    }
    for (const { at, sockets, since } of byStore.values()) {
      const { state, history } = await this.host.read(at, since);
      const seen = await digest(state);
      for (const ws of sockets) {
        const s = attachmentOf(ws);
        if (s?.phase !== "watching") continue;
        const after = history && s.position !== undefined ? changesAfter(history, s.position) : undefined;
        if (s.seen === seen && !after?.changes.length) continue;
        // What it was last sent is kept with the socket, so a woken object goes on from there.
        const position = s.position === undefined || !history ? s.position : Math.max(history.position, s.position);
        keepAttachment(ws, { at: s.at, phase: "watching", seen, position });
        sendAnswer(ws, { type: "state", state, ...after });
      }
      nextEnd = Math.min(nextEnd, endOf(state));
    }
    if (nextEnd === Infinity) return this.recheckIn(undefined);
    // The store's clock decides when a lease ends: one not over by its clock yet is looked at again shortly.
    this.recheckIn(Math.max(CLOCK_LAG_MS, nextEnd - Date.now() + 1));
  }

  /** The one timer: the next lease (or lock-delay) end, when the state changes by itself. */
  private recheckIn(ms: number | undefined): void {
    this.cancelRecheck?.();
    this.cancelRecheck = ms === undefined ? undefined : this.host.timers.after(ms, () => this.changed());
  }

  private fail(ws: WebSocket, err: unknown): void {
    this.sockets.fail(ws, err);
  }
}

/**
 * What a watcher last sent position `last` is told of the history: the changes after it, in order; or,
 * where the history no longer holds the one after `last`, the newest alone, marked `missed`.
 */
function changesAfter(history: NonNullable<WatchedRead["history"]>, last: number): { changes: Array<{ position: number }>; missed?: true } {
  const changes = history.changes.filter((c) => c.position > last);
  if (changes.length && history.first !== null && history.first > last + 1) return { changes: changes.slice(-1), missed: true };
  return { changes };
}

/** When the state changes by itself: the earliest lease or lock-delay end it names (Infinity: none). */
function endOf(state: Record<string, unknown>): number {
  let end = Infinity;
  for (const field of ["expiresAt", "delayedUntil"]) {
    const t = state[field];
    if (typeof t === "number" && t > 0) end = Math.min(end, t);
  }
  return end;
}

/** A short digest of the state, less the remaining time (ttlMs), which differs at every read. */
async function digest(state: Record<string, unknown>): Promise<string> {
  const { ttlMs: _ttl, ...rest } = state;
  const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(rest)));
  return btoa(String.fromCharCode(...new Uint8Array(bytes).slice(0, 12)));
}
