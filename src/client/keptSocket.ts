import type { SocketAnswer } from "../wire/socketProtocol.js";
import { errorFromResponse, UnreachableError } from "./errors.js";

/** The kept socket broke (closed, failed, or gave no answer in time): the lease goes on over HTTP. */
export class KeptSocketBrokenError extends UnreachableError {}

type Pending = { expect: "heartbeat" | "released"; resolve: (answer: Record<string, unknown>) => void; reject: (err: unknown) => void };

/**
 * A wait socket kept open after `held` (docs/API.md, "Keeping the socket as
 * the holder"): the holder's heartbeats and its release go over it, the
 * release handing the lock to the next waiter inside the lock's object in
 * the same step. One message at a time (the service takes one in flight).
 * Once it breaks it stays broken, and the lease's heartbeats and release go
 * over HTTP instead, for the same token: nothing of the lease is lost with it.
 */
export class KeptSocket {
  private pending: Pending | undefined;
  /** Messages wait their turn here: a heartbeat on its way when the release comes. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Messages sent or queued whose answer has not come (or that failed) yet. */
  private unanswered = 0;
  private broken = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly path: string,
  ) {
    ws.onmessage = (event) => this.answered(event.data);
    ws.onclose = () => this.break("closed");
    ws.onerror = () => {
      // The close event follows.
    };
  }

  /** Whether it can still carry the lease's messages. */
  get open(): boolean {
    return !this.broken;
  }

  heartbeat(ttlMs: number, deadline: number): Promise<{ expiresAt: number; ttlMs: number; fence: number }> {
    return this.send({ type: "heartbeat", ttlMs }, "heartbeat", deadline) as Promise<{ expiresAt: number; ttlMs: number; fence: number }>;
  }

  /** The release; the service closes the socket after its answer. */
  async release(deadline: number): Promise<void> {
    await this.send({ type: "release" }, "released", deadline);
    this.close();
  }

  /** Closing releases nothing: the lease stays the holder's until its release or TTL. */
  close(): void {
    this.broken = true;
    try {
      this.ws.close(1000);
    } catch {
      // closing already
    }
  }

  private send(message: Record<string, unknown>, expect: Pending["expect"], deadline: number): Promise<Record<string, unknown>> {
    // Nothing sent or waiting: out at once, not a turn of the queue later (a release is on the handoff's
    // critical path: the next waiter is granted when it arrives). Otherwise after those before it.
    const go = () => this.exchange(message, expect, deadline);
    const turn = this.unanswered === 0 ? go() : this.queue.then(go);
    this.unanswered++;
    const settled = () => {
      this.unanswered--;
    };
    this.queue = turn.then(settled, settled);
    return turn;
  }

  /** One message out and its answer in (or the socket broken, or no answer by the deadline). */
  private exchange(message: Record<string, unknown>, expect: Pending["expect"], deadline: number): Promise<Record<string, unknown>> {
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      if (this.broken) return reject(this.brokenError("is closed"));
      let timer: ReturnType<typeof setTimeout> | undefined;
      this.pending = {
        expect,
        resolve: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      try {
        this.ws.send(JSON.stringify(message));
      } catch {
        this.break("could not send");
        return;
      }
      // Armed after the send, so the message is out first; no answer can come before this runs.
      timer = setTimeout(() => this.break("gave no answer in time"), Math.max(0, deadline - Date.now()));
    });
  }

  private answered(data: unknown): void {
    let answer: SocketAnswer & Record<string, unknown>;
    try {
      answer = JSON.parse(String(data));
    } catch {
      this.break("sent something that is not JSON");
      return;
    }
    const pending = this.pending;
    if (!pending) return;
    // An error answer (a lost lease, a refusal) is the one HTTP would give; the service closes the socket after it.
    if (answer.type === "error") {
      this.pending = undefined;
      this.broken = true;
      pending.reject(errorFromResponse(answer.status, answer, null));
      return;
    }
    if (answer.type === pending.expect) {
      this.pending = undefined;
      pending.resolve(answer);
      return;
    }
    this.break(`answered ${String(answer.type)}, not ${pending.expect}`);
  }

  /** Broken for good; the message waiting for an answer, if any, fails with why. */
  private break(why: string): void {
    const pending = this.pending;
    this.pending = undefined;
    if (!this.broken) this.close();
    // The error only for someone waiting: every kept socket closes at its end (the service closes it after `released`).
    if (pending) pending.reject(this.brokenError(why));
  }

  private brokenError(why: string): KeptSocketBrokenError {
    return new KeptSocketBrokenError(`the kept socket ${this.path} ${why}`);
  }
}
