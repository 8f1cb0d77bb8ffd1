import { keyAsProtocol, SOCKET_PROTOCOL, type SocketAnswer } from "../wire/socketProtocol.js";
import { errorFromResponse, RetryLaterError, UnreachableError } from "./errors.js";

/** A lock's state as its GET answers it (docs/API.md): `held`, `holder`, `fence`, `expiresAt`, `waiters`, ... by kind. */
export type LockState = Record<string, unknown>;

/** Where and how to open a watch socket. */
export interface WatchOptions {
  baseUrl: string;
  apiKey: string;
  /** The lock's path, e.g. /v1/locks/<name>. */
  path: string;
  WebSocket: typeof WebSocket;
  /** Called with every state as it is pushed (besides the iterator). */
  onState?: (state: LockState) => void;
  /** The lock's state over HTTP: asked when a socket did not open, for the typed error a refused handshake hides. */
  probe(): Promise<unknown>;
}

/** After the socket closed on its own (a deploy, a network break), opened again this much later, at most. */
const REOPEN_MAX_MS = 5000;

/**
 * A watch of one lock (docs/API.md, "Watching a lock"): its state pushed on
 * every change, the first at once. Iterate it (`for await`), or pass
 * onState; close() ends it. A socket that closes on its own is opened again
 * (backing off to 5 s), and the state is pushed anew on it; an `error`
 * answer ends the watch with the typed error, as does a socket refused for
 * good (a browser's WebSocket hides why: the state's GET says, an unknown key
 * or a bad name; a refusal worth retrying, such as a cap, is retried).
 */
export class LockWatch implements AsyncIterable<LockState> {
  private ws: WebSocket | undefined;
  private closed = false;
  private failure: unknown;
  private readonly queue: LockState[] = [];
  private wake: (() => void) | undefined;
  private reopenMs = 100;
  private reopenTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: WatchOptions) {
    this.open();
  }

  /** Ends the watch: the socket closes, an iteration in progress ends. */
  close(): void {
    this.closed = true;
    clearTimeout(this.reopenTimer);
    try {
      this.ws?.close(1000);
    } catch {
      // closing already
    }
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<LockState> {
    try {
      for (;;) {
        const next = this.queue.shift();
        if (next) {
          yield next;
          continue;
        }
        if (this.failure !== undefined) throw this.failure;
        if (this.closed) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    } finally {
      this.close();
    }
  }

  private open(): void {
    const url = `${this.options.baseUrl.replace(/^http/, "ws")}${this.options.path}/watch`;
    const ws = new this.options.WebSocket(url, [SOCKET_PROTOCOL, keyAsProtocol(this.options.apiKey)]);
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      ws.send(JSON.stringify({ type: "watch" }));
    };
    ws.onmessage = (event) => {
      let answer: SocketAnswer;
      try {
        answer = JSON.parse(String(event.data)) as SocketAnswer;
      } catch {
        return this.fail(new UnreachableError("the watch socket sent something that is not JSON"));
      }
      if (answer.type === "error") return this.fail(errorFromResponse(answer.status, answer, null));
      if (answer.type !== "state") return;
      this.reopenMs = 100;
      this.options.onState?.(answer.state);
      this.queue.push(answer.state);
      this.notify();
    };
    ws.onerror = () => {
      // The close event follows.
    };
    ws.onclose = () => {
      if (this.closed || this.ws !== ws) return;
      if (opened) return this.reopenLater();
      this.options.probe().then(
        () => this.reopenLater(),
        (err) => (err instanceof RetryLaterError || err instanceof UnreachableError ? this.reopenLater() : this.fail(err)),
      );
    };
  }

  private reopenLater(): void {
    if (this.closed) return;
    this.reopenTimer = setTimeout(() => {
      if (!this.closed) this.open();
    }, this.reopenMs);
    this.reopenMs = Math.min(REOPEN_MAX_MS, this.reopenMs * 2);
  }

  private fail(err: unknown): void {
    this.failure = err;
    this.close();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
