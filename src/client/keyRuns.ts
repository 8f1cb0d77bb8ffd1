import { nameSegment } from "./names.js";
import { leaseClock } from "../wire/keepLease.js";
import { type BeginOptions, type BeginResult, type GrantBody, grantFields, noticeOf, type WaitNotice } from "./clientOptions.js";
import { InProgressError } from "./errors.js";
import { type GrantContext, once, writeOrGiveBack } from "./grants.js";
import { Lease } from "./lease.js";
import { type KeyWaitEnd, watchKeyOverSocket } from "./socketWait.js";

export const keyPath = (key: string, op: string) => `/v1/idempotency/${nameSegment(key)}/${op}`;

/**
 * Begins an idempotency key, waiting up to waitMs (any length) while
 * another caller runs it: on the key's wait socket its end is pushed (a
 * period at a time), else begin is asked again. Waiting begins again
 * rather than inspects: if the running caller fails or vanishes, this one
 * takes over.
 */
export async function beginKey<T>(ctx: GrantContext, key: string, options: BeginOptions): Promise<BeginResult<T>> {
  const until = Date.now() + (options.waitMs ?? 0);
  const notice = once(options.onWait);
  for (;;) {
    try {
      return await beginOnce<T>(ctx, key, options);
    } catch (err) {
      if (!(err instanceof InProgressError) || Date.now() >= until || options.signal?.aborted) throw err;
      const ended = await awaitKeyEnd(ctx, key, until - Date.now(), options.signal, (channel) => notice(noticeOf(channel, err.body)));
      // The socket pushes whichever run completed, and the watch carries no fingerprint: the run this
      // begin was told of may have been failed and another request's begun and completed meanwhile. A
      // begin with a fingerprint asks begin again, which replays the result only to a matching request.
      if (ended?.state === "completed" && options.fingerprint === undefined) return { ...ended, response: ended.response as T };
      if (!ended) {
        notice(noticeOf("http", err.body));
        await new Promise((r) => setTimeout(r, Math.max(1, Math.min(err.retryAfterMs, 1000, until - Date.now()))));
      }
    }
  }
}

/** One begin, no wait. */
async function beginOnce<T>(ctx: GrantContext, key: string, options: BeginOptions): Promise<BeginResult<T>> {
  const sentAt = leaseClock();
  const body = {
    ttlMs: options.ttlMs,
    retainMs: options.retainMs,
    fingerprint: options.fingerprint,
    onExpire: options.onExpire,
    holder: options.holder,
  };
  const r = await writeOrGiveBack<{ state: string; response?: T; completedAt?: number } & GrantBody>(
    ctx.host,
    { kind: "idempotency", name: key },
    keyPath(key, "begin"),
    body,
    Date.now() + ctx.host.timeoutMs,
    options.signal,
  );
  if (r.state === "completed") return { state: "completed", response: r.response as T, completedAt: r.completedAt as number, fence: r.fence };
  return { state: "started", lease: new Lease(ctx.host, { kind: "idempotency", name: key, ...grantFields(r) }, sentAt) };
}

/**
 * Waits on the key's wait socket for the running caller's end, a period at
 * most: its result is pushed, no polling. Undefined where no socket can be
 * used (then the caller asks begin again).
 */
function awaitKeyEnd(
  ctx: GrantContext,
  key: string,
  waitMs: number,
  signal: AbortSignal | undefined,
  waiting: (channel: WaitNotice["channel"]) => void,
): Promise<KeyWaitEnd | undefined> {
  const periodMs = Math.max(1, Math.round(Math.min(ctx.periodMs, waitMs)));
  return ctx.sockets.wait(periodMs, signal, (socket) =>
    watchKeyOverSocket({
      ...socket,
      path: keyPath(key, "wait"),
      waitMs: periodMs,
      deadline: Date.now() + periodMs + ctx.host.timeoutMs,
      signal,
      opened: () => waiting("socket"),
    }),
  );
}
