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
  /** The socket's query, asked at every (re)opening: a watch at a position resumes after the last it was told ("?since=N"). */
  query?: () => string;
  /** Called with every state as it is pushed (besides the iterator), and the push it came in (an observer's changes). */
  onState?: (state: LockState, push: StatePush) => void;
  /** The lock's state over HTTP: asked when a socket did not open, for the typed error a refused handshake hides. */
  probe(): Promise<unknown>;
}

/** A watch socket's push: the state, and on a watch at a position, the changes after the last one it was sent. */
export type StatePush = Extract<SocketAnswer, { type: "state" }>;

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
  private readonly inbox = new Inbox<LockState>();
  private reopenMs = 100;
  private reopenTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: WatchOptions) {
    this.open();
  }

  /** Ends the watch: the socket closes, an iteration in progress ends. */
  close(): void {
    this.inbox.end();
    clearTimeout(this.reopenTimer);
    try {
      this.ws?.close(1000);
    } catch {
      // closing already
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<LockState> {
    try {
      yield* this.inbox.take();
    } finally {
      this.close();
    }
  }

  private open(): void {
    const url = `${this.options.baseUrl.replace(/^http/, "ws")}${this.options.path}/watch${this.options.query?.() ?? ""}`;
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
      this.options.onState?.(answer.state, answer);
      this.inbox.push(answer.state);
    };
    ws.onerror = () => {
      // The close event follows.
    };
    ws.onclose = () => {
      if (this.inbox.ended || this.ws !== ws) return;
      if (opened) return this.reopenLater();
      this.options.probe().then(
        () => this.reopenLater(),
        (err) => (err instanceof RetryLaterError || err instanceof UnreachableError ? this.reopenLater() : this.fail(err)),
      );
    };
  }

  private reopenLater(): void {
    if (this.inbox.ended) return;
    this.reopenTimer = setTimeout(() => {
      if (!this.inbox.ended) this.open();
    }, this.reopenMs);
    this.reopenMs = Math.min(REOPEN_MAX_MS, this.reopenMs * 2);
  }

  private fail(err: unknown): void {
    this.inbox.fail(err);
    this.close();
  }
}

/** One change of an election (docs/API.md, "Elections"): a new leader (a new term) or its new value. */
export interface ElectionChange {
  /** Its place in the election's history: 1, 2, ... with no gaps. */
  position: number;
  term: number;
  value: string;
  /** When it happened (the service's clock, epoch ms). */
  at: number;
  /**
   * The changes between the last one this observer told and this one are gone from the
   * history (it keeps the last 64): this is the newest, and what came between is not told.
   */
  missed: boolean;
}

/**
 * Every change of an election, in order (client.observe): its watch socket is opened at the last
 * position told (GET .../watch?since=<last>), and each push carries the changes after the last
 * position the socket sent, so none is skipped when pushes merge; the socket reconnects by itself,
 * at the last position told then, and its first push brings what was missed. Where the history no
 * longer reaches back, the push is the newest change alone, told with `missed`.
 * A socket that does not open is asked about over HTTP (GET .../changes?since=<last>): a position
 * the service refuses (400 invalid_position: beyond its last) ends the observer with that error; a
 * service unreachable, or its store away (503), is tried again.
 */
export class ElectionObserver implements AsyncIterable<ElectionChange> {
  private readonly inbox = new Inbox<ElectionChange>();
  private readonly watch: LockWatch;

  /** `last`: the position seen before (undefined: from the current leader's change on). */
  constructor(
    openWatch: (since: () => number, onPush: (push: StatePush) => void) => LockWatch,
    private last: number | undefined,
  ) {
    // Without a position, from 0: the first push's newest change is the current leader's.
    const watch = openWatch(
      () => this.last ?? 0,
      (push) => this.take(push),
    );
    this.watch = watch;
    // The watch's own end (a refused position or name, an unknown key) is this observer's.
    void (async () => {
      try {
        for await (const _ of watch) {
          // states are taken by onPush
        }
      } catch (err) {
        this.fail(err);
      }
    })();
  }

  /** The position of the last change told (0 before any). */
  get position(): number {
    return this.last ?? 0;
  }

  close(): void {
    this.inbox.end();
    this.watch.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ElectionChange> {
    try {
      yield* this.inbox.take();
    } finally {
      this.close();
    }
  }

  private take(push: StatePush): void {
    if (this.inbox.ended || !push.changes) return;
    const changes = push.changes as unknown as Array<Omit<ElectionChange, "missed">>;
    if (this.last === undefined) {
      // The first push of an observer that starts now: the current leader's change only, nothing missed.
      const newest = changes[changes.length - 1];
      this.last = Number(push.state.position) || 0;
      if (newest) this.tell({ ...newest, missed: false });
      return;
    }
    let missed = push.missed === true;
    for (const c of changes) {
      // A push from a socket before the last reconnection may repeat what was told.
      if (c.position <= this.last) continue;
      this.tell({ ...c, missed });
      missed = false;
    }
  }

  private tell(change: ElectionChange): void {
    this.last = change.position;
    this.inbox.push(change);
  }

  private fail(err: unknown): void {
    this.inbox.fail(err);
    this.close();
  }
}

/**
 * What a pushed stream was told and its reader has not taken yet: its items
 * in order, then its end or its first error. Its owner's async iterator
 * takes from it (LockWatch, ElectionObserver).
 */
class Inbox<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined;
  private failure: { error: unknown } | undefined;
  /** No item comes after this: ended by its owner, or failed. */
  ended = false;

  push(item: T): void {
    this.items.push(item);
    this.notify();
  }

  /** Ends it with an error, thrown to the reader once the items before it are taken; the first error stays. */
  fail(error: unknown): void {
    this.failure ??= { error };
    this.end();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  /** The items as they come, until the end (or the error). */
  async *take(): AsyncGenerator<T> {
    for (;;) {
      const next = this.items.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.failure) throw this.failure.error;
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
