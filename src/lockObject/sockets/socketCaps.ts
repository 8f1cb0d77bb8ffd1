import type { Env } from "../../env.js";
import { RateLimitedError } from "../../errors.js";
import { SOCKETS_PER_NAMESPACE_DEFAULT, WAITERS_PER_LOCK_DEFAULT } from "../../limits.js";
import { logError } from "../../logError.js";
import { openRateOf, positiveSetting, SocketRateRefusal } from "../../admission/socketOpens.js";
import { errorAnswer } from "../../wire/errorAnswer.js";
import { SOCKET_FLOOD_UNTIL_HEADER } from "../../wire/socketProtocol.js";
import type { SocketAt } from "./socketSchemas.js";
import { FloodRefusal, floodPenalties, floodRefusal } from "../../admission/floodPenalties.js";
import { type NamespaceObjectRpc, namespaceObjectOf } from "../../store/durable/NamespaceObjectRpc.js";

/** How soon a refused waiter may try again: a waiter ahead leaves within its waitMs, often much sooner. */
const CROWDED_RETRY_MS = 1000;
/** How long after a socket ends its lock object tells the namespace object (ends meanwhile are told together). */
const TELL_AFTER_MS = 250;
/** A lock object with sockets open tells its namespace object again at least this often (below SOCKETS_TOLD_FOR_MS). */
const TELL_AGAIN_MS = 5 * 60 * 1000;

/**
 * A socket's room under the caps, reserved when its handshake came in (before
 * any await, so handshakes that arrive together cannot all pass one check):
 * `settle()` once the socket is counted as open, or refused; either way the
 * reservation is given back, once.
 */
export interface SocketRoom {
  settle(): void;
}

/**
 * The caps on waiting (docs/API.md, "Limits of a wait socket"): waiters on
 * one lock (sockets and held-open requests), and wait sockets of one
 * namespace over all its locks, counted by its namespace object from what
 * each lock object tells it. A refusal comes before any socket: 429
 * `rate_limited` with `retryAfterMs` and the cap it met, and the waiters
 * already there lose nothing.
 *
 * One count per lock: sockets open, HTTP waiters in line, and handshakes
 * still being admitted (reserved synchronously, before the namespace object
 * is asked), so the per-lock cap is exact however many arrive at once. The
 * namespace's count is each lock object's last word (asked in order on one
 * stub, including its handshakes in flight), so it overshoots only by what
 * a lock object could not tell (its namespace object did not answer: the
 * socket is let in) and undershoots for TELL_AFTER_MS after closes.
 */
export class SocketCaps {
  private tellPending = false;
  private toldAt = 0;
  /** Handshakes admitted by the per-lock check and not yet open or refused. */
  private reserved = 0;
  /** One stub, so this object's reservations and tells reach the namespace object in the order they were made. */
  private stub: DurableObjectStub<NamespaceObjectRpc> | undefined;
  /** The last flood penalty told to the namespace object, until it is heard (or failed). */
  private penaltyTold: Promise<void> = Promise.resolve();
  /** MAX_WAITERS_PER_LOCK, read at the first waiter: an object's settings are fixed for its life, and an HTTP waiter asks no other folder. */
  private waiterCap: number | undefined;

  constructor(
    private readonly env: Env,
    /** Wait sockets open on this object, waiting, offered or held. */
    private readonly liveSockets: () => number,
    /** HTTP waiters in this object's line. */
    private readonly httpWaiters: () => number,
  ) {}

  /** An HTTP waiter may join the line: undefined, or its refusal. */
  admitWaiter(): RateLimitedError | undefined {
    return this.crowded();
  }

  /**
   * A wait socket may open: its room, or its refusal. The lock's count is
   * checked and the room reserved at once, before anything is awaited; then
   * the namespace object is asked (if it cannot answer: yes). The caller
   * settles the room once the socket is counted open (or fails to open).
   */
  async admitSocket(at: SocketAt): Promise<{ refused: RateLimitedError } | { room: SocketRoom }> {
    // A flooder this isolate knows of is refused before it counts for anything (the Worker refuses it first where it shares the isolate).
    const boxed = floodPenalties.refusedFor(at.clientIds ?? []);
    if (boxed > 0) return { refused: floodRefusal(boxed, Date.now() + boxed) };
    const crowded = this.crowded();
    if (crowded) return { refused: crowded };
    this.reserved++;
    let settled = false;
    const room: SocketRoom = {
      settle: () => {
        if (settled) return;
        settled = true;
        this.reserved--;
      },
    };
    const refused = await this.askNamespace(at).catch((err: unknown) => {
      room.settle();
      throw err;
    });
    if (refused) {
      room.settle();
      return { refused };
    }
    return { room };
  }

  private async askNamespace(at: SocketAt): Promise<RateLimitedError | undefined> {
    const stub = this.namespaceObject(at);
    if (!stub) return undefined;
    const cap = positiveSetting(this.env.MAX_SOCKETS_PER_NAMESPACE, SOCKETS_PER_NAMESPACE_DEFAULT, "MAX_SOCKETS_PER_NAMESPACE");
    try {
      // This object's count with every handshake it is admitting: the namespace object keeps the latest.
      const { ok, total, floodUntil, openRetryMs } = await stub.reserveSocket(
        objectKey(at),
        this.liveSockets() + this.reserved,
        cap,
        at.clientIds ?? [],
        at.openIds ?? [],
      );
      this.toldAt = Date.now();
      if (floodUntil !== undefined) {
        // A flood this isolate had not seen (another isolate's object refused it): kept here too.
        floodPenalties.learn(at.clientIds ?? [], floodUntil);
        return floodRefusal(floodUntil - Date.now(), floodUntil);
      }
      if (openRetryMs !== undefined) return new SocketRateRefusal(openRetryMs, openRateOf(this.env));
      if (!ok) {
        return new RateLimitedError(
          CROWDED_RETRY_MS,
          `this namespace has ${total} wait sockets open, the most it may (${cap}): retry later, or wait over HTTP`,
          "sockets_per_namespace",
        );
      }
    } catch (err) {
      this.stub = undefined; // a stub that failed may stay broken: the next call makes a new one
      logError(`the namespace object of ${at.ref.ns} did not count a wait socket; letting it open`, err);
    }
    return undefined;
  }

  /**
   * A socket of `at` sent faster than a socket may: its client's ids are
   * refused new sockets for a while (admission/floodPenalties.ts), in this isolate at
   * once and, told in the background, by the namespace object for every
   * isolate.
   */
  penalize(at: SocketAt): void {
    const ids = at.clientIds ?? [];
    if (!ids.length) return;
    const until = floodPenalties.strike(ids);
    const stub = this.namespaceObject(at);
    if (!stub) return;
    this.penaltyTold = (async () => stub.penalize(ids, until))().catch((err) => {
      this.stub = undefined;
      logError(`telling the namespace object of ${at.ref.ns} of a socket flood failed; this isolate still refuses it`, err);
    });
  }

  /** Nothing waits here but `except` of the open sockets: no other socket or watch socket, no HTTP waiter, no handshake being admitted. */
  quiet(except = 0): boolean {
    return this.liveSockets() - except + this.httpWaiters() + this.reserved === 0;
  }

  /**
   * Before this object resets itself (ignoredCloses.ts): the namespace object has heard the last flood
   * penalty and, for `at`'s lock, how many sockets are open here now, rather than in the background.
   */
  async settleTells(at: SocketAt | undefined): Promise<void> {
    await this.penaltyTold;
    const stub = at && this.namespaceObject(at);
    if (at && stub) await stub.tellSockets(objectKey(at), this.liveSockets());
  }

  /**
   * After sockets closed or ended (or now and then while they stay): the
   * namespace object hears this object's count, TELL_AFTER_MS later and once
   * for all that changed meanwhile, so a handoff (a socket's release, the next
   * one's grant) never waits behind the namespace object's storage write.
   */
  tell(at: SocketAt, onlyIfStale = false): void {
    if (onlyIfStale && Date.now() - this.toldAt < TELL_AGAIN_MS) return;
    if (this.tellPending) return;
    const stub = this.namespaceObject(at);
    if (!stub) return;
    this.tellPending = true;
    setTimeout(() => {
      this.tellPending = false;
      (async () => stub.tellSockets(objectKey(at), this.liveSockets()))()
        .then(() => {
          this.toldAt = Date.now();
        })
        .catch((err) => {
          this.stub = undefined;
          logError(`telling the namespace object of ${at.ref.ns} its wait sockets failed; its count lapses by itself`, err);
        });
    }, TELL_AFTER_MS);
  }

  private crowded(): RateLimitedError | undefined {
    this.waiterCap ??= positiveSetting(this.env.MAX_WAITERS_PER_LOCK, WAITERS_PER_LOCK_DEFAULT, "MAX_WAITERS_PER_LOCK");
    const cap = this.waiterCap;
    const here = this.liveSockets() + this.httpWaiters() + this.reserved;
    if (here < cap) return undefined;
    return new RateLimitedError(CROWDED_RETRY_MS, `this lock has ${here} waiters, the most it takes (${cap}): retry later`, "waiters_per_lock");
  }

  private namespaceObject(at: SocketAt): DurableObjectStub<NamespaceObjectRpc> | undefined {
    const namespaces = this.env.NAMESPACE_OBJECT;
    if (!namespaces) return undefined;
    this.stub ??= namespaceObjectOf(namespaces, at.ref.ns, "sockets");
    return this.stub;
  }
}

/** A refused handshake's answer: the HTTP error, with Retry-After, before any socket (and a flood's end, for the Worker). */
export function refusal(err: RateLimitedError): Response {
  const { status, body, retryAfterMs } = errorAnswer(err);
  const headers: Record<string, string> = { "retry-after": String(Math.ceil((retryAfterMs ?? 0) / 1000)) };
  if (err instanceof FloodRefusal) headers[SOCKET_FLOOD_UNTIL_HEADER] = String(err.until);
  return Response.json(body, { status, headers });
}

/** The lock object's name in its namespace object's socket counts. */
const objectKey = (at: SocketAt): string => `${at.kind}:${at.ref.name}`;
