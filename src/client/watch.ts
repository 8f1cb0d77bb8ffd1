import { keyAsProtocol, SOCKET_PROTOCOL, type SocketAnswer } from "../wire/socketProtocol.js";
import { errorFromResponse, RetryLaterError, StoreUnavailableError, UnreachableError } from "./errors.js";

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

/** GET /v1/elections/{name}/changes, as the observer reads it. */
export interface ChangesAnswer {
  position: number;
  first: number | null;
  changes: Array<Omit<ElectionChange, "missed">>;
}

/**
 * Every change of an election, in order (client.observe): the watch socket
 * says when the history moved (its state's `position`), and the changes
 * after the last one told are read from the history (GET
 * .../changes?since=<last>), so none is skipped when pushes merge or the
 * socket was away; the watch reconnects by itself, and the first state after
 * it brings what was missed. A read cut off (a restart, a network break) is
 * tried again; a position the service refuses (`since` beyond its last) ends
 * the observer with that error.
 * Where the history no longer reaches back, the newest change is told with
 * `missed`.
 */
export class ElectionObserver implements AsyncIterable<ElectionChange> {
  private readonly inbox = new Inbox<ElectionChange>();
  /** Reads of the history, one after another, in the order the states came. */
  private reading: Promise<void> = Promise.resolve();
  private readonly watch: LockWatch;

  /** `last`: the position seen before (undefined: from the current leader's change on). */
  constructor(
    openWatch: (onState: (state: LockState) => void) => LockWatch,
    /** GET .../changes?since=: the kept changes after the given position (400 invalid_position past the last). */
    private readonly readChanges: (since: number) => Promise<ChangesAnswer>,
    private last: number | undefined,
  ) {
    const watch = openWatch((state) => {
      const position = Number(state.position);
      this.reading = this.reading.then(() => this.catchUp(position)).catch((err) => this.fail(err));
    });
    this.watch = watch;
    // The watch's own end (a refused name, an unknown key) is this observer's.
    void (async () => {
      try {
        for await (const _ of watch) {
          // states are taken by onState
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

  private async catchUp(position: number): Promise<void> {
    if (this.inbox.ended || !Number.isSafeInteger(position)) return;
    if (this.last === undefined) this.last = Math.max(0, position - 1);
    if (position === this.last) return;
    // Behind the last told: a push that came late (the read below finds nothing new), or a `since`
    // from the election's future, which the service refuses (400 invalid_position ends the observer).
    const read = await this.readUntilAnswered(this.last);
    if (!read) return;
    const { changes, first } = read;
    const after = changes.filter((c) => c.position > (this.last as number));
    if (after.length === 0) return;
    if (first !== null && first > this.last + 1) {
      // What came between is gone: the newest change, marked.
      this.tell({ ...after[after.length - 1], missed: true });
      return;
    }
    for (const c of after) this.tell({ ...c, missed: false });
  }

  /**
   * The history's read, tried again (backing off to 5 s, as the watch reopens) while the service
   * cannot be reached, its store does not answer (503) or it asks to retry: a read cut by a restart,
   * a network break or a store away for a while is no reason to end the observer (a read changes
   * nothing). Undefined once the observer is closed.
   */
  private async readUntilAnswered(since: number): Promise<ChangesAnswer | undefined> {
    for (let waitMs = 100; !this.inbox.ended; waitMs = Math.min(REOPEN_MAX_MS, waitMs * 2)) {
      try {
        return await this.readChanges(since);
      } catch (err) {
        if (!(err instanceof RetryLaterError || err instanceof UnreachableError || err instanceof StoreUnavailableError)) throw err;
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
    }
    return undefined;
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
