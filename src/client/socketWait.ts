import { keyAsProtocol, SOCKET_PROTOCOL, type SocketAnswer } from "../lockObject/socketProtocol.js";
import { errorFromResponse, LockedError, UnreachableError } from "./errors.js";

/** How the client waits in a lock's line (HoldfastClientOptions.waitChannel). */
export type WaitChannel = "auto" | "socket" | "http";

/** The WebSocket the runtime offers (Workers, browsers, Deno, Node 22+), or undefined (Node 20 without a flag). */
export function runtimeWebSocket(): typeof WebSocket | undefined {
  return (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;
}

/** The socket never opened (refused, no such route on an older service, a proxy that blocks upgrades): HTTP can wait instead. */
export class SocketUnavailableError extends UnreachableError {}

export interface SocketWaitOptions {
  baseUrl: string;
  apiKey: string;
  /** The kind's wait path, e.g. /v1/locks/<name>/wait. */
  path: string;
  /** The acquire body (ttlMs, waitMs, and the kind's fields). */
  body: Record<string, unknown>;
  /** Local time (ms) after which the wait is given up. */
  deadline: number;
  signal?: AbortSignal;
  WebSocket: typeof WebSocket;
  /**
   * A grant was offered and acknowledged, but the wait ended before `held`
   * came: the service may have taken the ack, so the lease may be held by
   * nobody. Give it back (a release of a grant already taken back is
   * harmless), rather than leave it to its TTL.
   */
  giveBack(token: string): void;
}

/**
 * One wait over a wait socket (docs/API.md, "Waiting over a WebSocket"):
 * acquire, then acknowledge the grant, and the grant is the caller's only
 * once the service answers `held`. Until then a socket that fails leaves
 * nothing behind: the service takes back an unacknowledged grant at once.
 * The key travels as a subprotocol, so it works from a browser too.
 */
export function waitOverSocket<Grant extends { token: string }>(options: SocketWaitOptions): Promise<Grant> {
  const url = `${options.baseUrl.replace(/^http/, "ws")}${options.path}`;
  return new Promise<Grant>((resolve, reject) => {
    let opened = false;
    let settled = false;
    let grant: Grant | undefined;
    const ws = new options.WebSocket(url, [SOCKET_PROTOCOL, keyAsProtocol(options.apiKey)]);
    const finish = (err: unknown, value?: Grant) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      try {
        ws.close(1000);
      } catch {
        // closing already
      }
      if (err === undefined) return resolve(value as Grant);
      if (grant) options.giveBack(grant.token);
      reject(err);
    };
    const onAbort = () => finish(options.signal?.reason ?? new Error("aborted"));
    const timer = setTimeout(
      () => finish(new UnreachableError(`no answer on the wait socket ${options.path} before the deadline`)),
      Math.max(0, options.deadline - Date.now()),
    );
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });

    ws.onopen = () => {
      opened = true;
      ws.send(JSON.stringify({ type: "acquire", ...options.body }));
    };
    ws.onmessage = (event) => {
      let answer: SocketAnswer;
      try {
        answer = JSON.parse(String(event.data)) as SocketAnswer;
      } catch {
        return finish(new UnreachableError(`the wait socket sent something that is not JSON`));
      }
      if (answer.type === "granted") {
        grant = answer.grant as Grant;
        ws.send(JSON.stringify({ type: "ack", token: grant.token }));
      } else if (answer.type === "held" && grant) finish(undefined, grant);
      else if (answer.type === "timeout") finish(new LockedError(answer.retryAfterMs, "not acquired within waitMs", { ...answer }));
      else if (answer.type === "error") finish(errorFromResponse(answer.status, answer, null));
    };
    ws.onerror = () => {
      // The close event follows and says which case this is.
    };
    ws.onclose = (event) => {
      if (!opened) return finish(new SocketUnavailableError(`the wait socket ${options.path} did not open (close code ${event.code})`));
      // Closed before `held`: any grant offered is back in the line; nothing of this wait is held.
      finish(new UnreachableError(`the wait socket ${options.path} closed before the wait ended (code ${event.code})`));
    };
  });
}

/** How a wait for another caller's run of an idempotency key ended. */
export type KeyWaitEnd = { state: "completed"; response: unknown; completedAt: number; fence: number } | { state: "free" } | { state: "timeout" };

/**
 * Waits on an idempotency key's wait socket for another caller's run to end
 * (docs/API.md): the stored result is pushed when it completes, `free` when
 * it failed or lapsed (begin it then), `timeout` after waitMs.
 */
export function watchKeyOverSocket(options: Omit<SocketWaitOptions, "body" | "giveBack"> & { waitMs: number }): Promise<KeyWaitEnd> {
  const url = `${options.baseUrl.replace(/^http/, "ws")}${options.path}`;
  return new Promise<KeyWaitEnd>((resolve, reject) => {
    let opened = false;
    let settled = false;
    const ws = new options.WebSocket(url, [SOCKET_PROTOCOL, keyAsProtocol(options.apiKey)]);
    const finish = (err: unknown, value?: KeyWaitEnd) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      try {
        ws.close(1000);
      } catch {
        // closing already
      }
      if (err === undefined) resolve(value as KeyWaitEnd);
      else reject(err);
    };
    const onAbort = () => finish(options.signal?.reason ?? new Error("aborted"));
    const timer = setTimeout(
      () => finish(new UnreachableError(`no answer on the wait socket ${options.path} before the deadline`)),
      Math.max(0, options.deadline - Date.now()),
    );
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    ws.onopen = () => {
      opened = true;
      ws.send(JSON.stringify({ type: "watch", waitMs: options.waitMs }));
    };
    ws.onmessage = (event) => {
      let answer: SocketAnswer;
      try {
        answer = JSON.parse(String(event.data)) as SocketAnswer;
      } catch {
        return finish(new UnreachableError("the wait socket sent something that is not JSON"));
      }
      if (answer.type === "completed")
        finish(undefined, { state: "completed", response: answer.response, completedAt: answer.completedAt, fence: answer.fence });
      else if (answer.type === "free") finish(undefined, { state: "free" });
      else if (answer.type === "timeout") finish(undefined, { state: "timeout" });
      else if (answer.type === "error") finish(errorFromResponse(answer.status, answer, null));
    };
    ws.onerror = () => {};
    ws.onclose = (event) => {
      if (!opened) return finish(new SocketUnavailableError(`the wait socket ${options.path} did not open (close code ${event.code})`));
      finish(new UnreachableError(`the wait socket ${options.path} closed before the wait ended (code ${event.code})`));
    };
  });
}
