import { keyAsProtocol, SOCKET_PROTOCOL, type SocketAnswer } from "../wire/socketProtocol.js";
import { errorFromResponse, LockedError, UnreachableError } from "./errors.js";
import { KeptSocket } from "./keptSocket.js";

/** How the client waits in a lock's line (HoldfastClientOptions.waitChannel). */
export type WaitChannel = "auto" | "socket" | "http";

/** The WebSocket the runtime offers (Workers, browsers, Deno, Node 22+), or undefined (Node 20 without a flag). */
export function runtimeWebSocket(): typeof WebSocket | undefined {
  return (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;
}

/** The socket never opened (refused, no such route on an older service, a proxy that blocks upgrades): HTTP can wait instead. */
export class SocketUnavailableError extends UnreachableError {}

/** Where and how to open a wait socket. */
export interface SocketOptions {
  baseUrl: string;
  apiKey: string;
  /** The wait path, e.g. /v1/locks/<name>/wait. */
  path: string;
  /** Local time (ms) after which the wait is given up. */
  deadline: number;
  signal?: AbortSignal;
  WebSocket: typeof WebSocket;
}

export interface SocketWaitOptions extends SocketOptions {
  /** The acquire body (ttlMs and the kind's fields; waitMs is set here). */
  body: Record<string, unknown>;
  /** How long to wait in line in all. */
  waitMs: number;
  /** The most one message may ask the service to wait (its bound): a longer wait renews its place before that runs out. */
  periodMs: number;
  /** The socket opened and the acquire went out: the wait is under way on it. */
  opened?(): void;
  /**
   * A grant was offered and acknowledged, but the wait ended before `held`
   * came: the service may have taken the ack, so the lease may be held by
   * nobody. Give it back (a release of a grant already taken back is
   * harmless), rather than leave it to its TTL.
   */
  takeBack(token: string): void;
}

/**
 * One wait over a wait socket (docs/API.md, "Waiting over a WebSocket"):
 * acquire, then acknowledge the grant, and the grant is the caller's only
 * once the service answers `held`. Until then a socket that fails leaves
 * nothing behind: the service takes back an unacknowledged grant at once.
 * The key travels as a subprotocol, so it works from a browser too. The
 * socket is kept (`keep`), so the holder's heartbeats and release can go
 * over it (keptSocket.ts).
 */
export function waitOverSocket<Grant extends { token: string }>(options: SocketWaitOptions): Promise<{ grant: Grant; kept: KeptSocket }> {
  let offered: Grant | undefined;
  const endsAt = Date.now() + options.waitMs;
  const firstWaitMs = Math.max(1, Math.min(options.periodMs, Math.round(options.waitMs)));
  let renewal: ReturnType<typeof setTimeout> | undefined;
  // The service ends a wait at its waitMs: half a period before that, the socket asks for up to a period more, in
  // the same place in line (`renew`), until the whole wait is covered. A renew that crosses the grant is dropped there.
  const renewBefore = (serviceEndsAt: number, send: (message: Record<string, unknown>) => void) => {
    if (serviceEndsAt >= endsAt) return;
    renewal = setTimeout(
      () => {
        if (offered) return;
        const waitMs = Math.max(1, Math.min(options.periodMs, Math.round(endsAt - Date.now())));
        try {
          send({ type: "renew", waitMs });
        } catch {
          return; // closing: its close event ends the wait
        }
        renewBefore(Date.now() + waitMs, send);
      },
      Math.max(0, serviceEndsAt - options.periodMs / 2 - Date.now()),
    );
  };
  return exchange<{ grant: Grant; kept: KeptSocket }>(options, {
    first: { type: "acquire", ...options.body, waitMs: firstWaitMs, keep: true },
    opened: (send) => {
      options.opened?.();
      renewBefore(Date.now() + firstWaitMs, send);
    },
    onAnswer: (answer, send, finish, keepOpen) => {
      if (answer.type === "granted") {
        offered = answer.grant as Grant;
        send({ type: "ack", token: offered.token });
      } else if (answer.type === "held" && offered) finish(undefined, { grant: offered, kept: keepOpen() });
      else if (answer.type === "timeout") finish(new LockedError(answer.retryAfterMs, "not acquired within waitMs", { ...answer }));
    },
    ended: () => clearTimeout(renewal),
    abandoned: () => {
      if (offered) options.takeBack(offered.token);
    },
  });
}

/** How a wait for another caller's run of an idempotency key ended. */
export type KeyWaitEnd = { state: "completed"; response: unknown; completedAt: number; fence: number } | { state: "free" } | { state: "timeout" };

/**
 * Waits on an idempotency key's wait socket for another caller's run to end
 * (docs/API.md): the stored result is pushed when it completes, `free` when
 * it failed or lapsed (begin it then), `timeout` after waitMs.
 */
export function watchKeyOverSocket(options: SocketOptions & { waitMs: number; opened?(): void }): Promise<KeyWaitEnd> {
  return exchange<KeyWaitEnd>(options, {
    first: { type: "watch", waitMs: options.waitMs },
    opened: () => options.opened?.(),
    onAnswer: (any, _send, finish) => {
      // An idempotency key's own answers (the wire lists no kind's: src/kinds/idempotency/objectPart.ts), or the core's timeout.
      const answer = any as KeyRunAnswer | SocketAnswer;
      if (answer.type === "completed")
        finish(undefined, { state: "completed", response: answer.response, completedAt: answer.completedAt, fence: answer.fence });
      else if (answer.type === "free") finish(undefined, { state: "free" });
      else if (answer.type === "timeout") finish(undefined, { state: "timeout" });
    },
  });
}

/** An idempotency key's wait socket's own answers: the run ended with a stored result, or nobody runs the key now. */
type KeyRunAnswer = { type: "completed"; response: unknown; completedAt: number; fence: number } | { type: "free" };

/** What one exchange does with its socket (see exchange). */
interface ExchangeSteps<T> {
  /** Sent once the socket is open. */
  first: Record<string, unknown>;
  /** The first message went out. */
  opened?: (send: (message: Record<string, unknown>) => void) => void;
  onAnswer: (
    answer: SocketAnswer,
    send: (message: Record<string, unknown>) => void,
    finish: (err: unknown, value?: T) => void,
    /** The socket, handed over open (before finish): the exchange no longer closes it. */
    keepOpen: () => KeptSocket,
  ) => void;
  /** The exchange ended, however. */
  ended?: () => void;
  /** It ended without a value. */
  abandoned?: () => void;
}

/**
 * One wait socket's exchange: opens it with the key as a subprotocol, sends
 * `first` once open, hands every answer to `onAnswer` (an `error` answer
 * ends it as the typed error HTTP would give), and ends it at the deadline,
 * on the caller's signal, or when the socket closes first (SocketUnavailable
 * when it never opened). `abandoned` runs when it ends without a value.
 */
function exchange<T>(options: SocketOptions, steps: ExchangeSteps<T>): Promise<T> {
  const { first, onAnswer, abandoned } = steps;
  const url = `${options.baseUrl.replace(/^http/, "ws")}${options.path}`;
  return new Promise<T>((resolve, reject) => {
    let opened = false;
    let settled = false;
    let handedOver = false;
    const ws = new options.WebSocket(url, [SOCKET_PROTOCOL, keyAsProtocol(options.apiKey)]);
    const finish = (err: unknown, value?: T) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      steps.ended?.();
      options.signal?.removeEventListener("abort", onAbort);
      if (!handedOver) {
        try {
          ws.close(1000);
        } catch {
          // closing already
        }
      }
      if (err === undefined) return resolve(value as T);
      abandoned?.();
      reject(err);
    };
    const onAbort = () => finish(options.signal?.reason ?? new Error("aborted"));
    const timer = setTimeout(
      () => finish(new UnreachableError(`no answer on the wait socket ${options.path} before the deadline`)),
      Math.max(0, options.deadline - Date.now()),
    );
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });

    const send = (message: Record<string, unknown>) => ws.send(JSON.stringify(message));
    ws.onopen = () => {
      opened = true;
      send(first);
      steps.opened?.(send);
    };
    ws.onmessage = (event) => {
      let answer: SocketAnswer;
      try {
        answer = JSON.parse(String(event.data)) as SocketAnswer;
      } catch {
        return finish(new UnreachableError("the wait socket sent something that is not JSON"));
      }
      if (answer.type === "error") return finish(errorFromResponse(answer.status, answer, null));
      onAnswer(answer, send, finish, () => {
        handedOver = true;
        return new KeptSocket(ws, options.path);
      });
    };
    ws.onerror = () => {
      // The close event follows and says which case this is.
    };
    ws.onclose = (event) => {
      if (!opened) return finish(new SocketUnavailableError(`the wait socket ${options.path} did not open (close code ${event.code})`));
      // Closed before the end: any grant offered is back in the line; nothing of this wait is held.
      finish(new UnreachableError(`the wait socket ${options.path} closed before the wait ended (code ${event.code})`));
    };
  });
}
