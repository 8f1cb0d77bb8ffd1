import { RateLimitedError } from "../../errors.js";
import { SOCKET_MESSAGES_PER_SECOND } from "../../limits.js";

/**
 * One wait socket's messages, let in one at a time and no faster than
 * SOCKET_MESSAGES_PER_SECOND (a bucket of that many, refilled at that rate).
 * At most one message is being handled and one waits behind it; one more
 * is refused rather than queued, so a socket that sends as fast as its
 * connection drains costs the object a bounded amount of work (an outside
 * run had one kept socket's heartbeats run 10,000 store calls at once and
 * stall every other tenant on the machine).
 */
export class MessageGate {
  private tokens = SOCKET_MESSAGES_PER_SECOND;
  private refilledAt = Date.now();
  private inGate = 0;
  private last: Promise<void> = Promise.resolve();

  /**
   * Runs `handle` once the socket's earlier messages are handled; its
   * failure is the answer's promise's. Throws RateLimitedError, at once,
   * when the socket sends faster than it may.
   */
  run(handle: () => Promise<void> | void, now = Date.now()): Promise<void> {
    this.tokens = Math.min(SOCKET_MESSAGES_PER_SECOND, this.tokens + ((now - this.refilledAt) * SOCKET_MESSAGES_PER_SECOND) / 1000);
    this.refilledAt = now;
    if (this.tokens < 1) {
      const retryAfterMs = Math.ceil(((1 - this.tokens) * 1000) / SOCKET_MESSAGES_PER_SECOND);
      throw new RateLimitedError(
        retryAfterMs,
        `a wait socket may send at most ${SOCKET_MESSAGES_PER_SECOND} messages a second; this one sent faster and is closed`,
        "socket_messages",
      );
    }
    if (this.inGate >= 2) {
      throw new RateLimitedError(
        100,
        "a wait socket's message came while two of its messages were still being handled: send the next once the last is answered",
        "socket_messages",
      );
    }
    this.tokens -= 1;
    this.inGate++;
    // Handled a turn later, never in the turn it arrived: a handler that does its work without real I/O (the
    // Durable store's synchronous storage) would otherwise finish before the next frame is even read, so the
    // frames of a flood would be counted at the pace they are handled rather than the pace they come, and
    // the refusal would come only after thousands more were read.
    const done = this.last
      .then(nextTurn)
      .then(handle)
      .finally(() => {
        this.inGate--;
      });
    this.last = done.catch(() => {});
    return done;
  }
}

/** Resolves in a later turn of the event loop, after the events already waiting (a socket's frames among them). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
