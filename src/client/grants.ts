import { checkClaimOnGrant, claimOnGrant } from "../fence/claim.js";
import { leaseClock } from "../wire/keepLease.js";
import { type GrantBody, grantFields, type LockOptions, noticeOf, type WaitNotice } from "./clientOptions.js";
import { LockedError, StoreUnavailableError, UnreachableError } from "./errors.js";
import type { KeptSocket } from "./keptSocket.js";
import { Lease, type LeaseHandle, type LeaseHost, leasePath } from "./lease.js";
import { waitOverSocket } from "./socketWait.js";
import type { SocketChannel } from "./waitChannel.js";

/** What the client's acquires and begins need of it. */
export interface GrantContext {
  host: LeaseHost;
  /** The waitChannel rule (waitChannel.ts). */
  sockets: SocketChannel;
  /** The most one request (or one wait socket message) asks the service to wait: its bound, 60 s. */
  periodMs: number;
}

/** Which lock a grant is of. */
export type LockWhat = Pick<LeaseHandle, "kind" | "name" | "mode">;

/** Releases a lease by its handle (an idempotency key's: fails it). */
export function releaseHandle(host: LeaseHost, handle: LockWhat & { token: string }): Promise<unknown> {
  return host.transport.write(leasePath(handle, "release"), { token: handle.token }, { deadline: Date.now() + host.timeoutMs });
}

/**
 * An acquire of `lockPath` (the lock's path; `/acquire` over HTTP, `/wait`
 * over a socket), waiting up to waitMs, however long: a socket renews its
 * place in line; HTTP asks a period at a time, again at the back of the
 * line when one runs out (as a socket does if its renewal came too late).
 */
export async function acquireLease(ctx: GrantContext, what: LockWhat, lockPath: string, body: Record<string, unknown>, options: LockOptions) {
  const claim = checkClaimOnGrant(options.claim);
  const lease = await acquireAny(ctx, what, lockPath, body, options);
  // Claim on grant: the resources hear of the new fence before its holder gets the lease (given back if they refuse).
  await claimOnGrant(claim, lease.fence, () => lease.release());
  return lease;
}

async function acquireAny(ctx: GrantContext, what: LockWhat, lockPath: string, body: Record<string, unknown>, options: LockOptions) {
  const waitMs = options.waitMs ?? 0;
  const until = Date.now() + waitMs;
  const notice = once(options.onWait);
  let busy: Record<string, unknown> | undefined;
  if (options.onWait && waitMs > 0) {
    // One try first: whether this waits at all, and who is in the way, for the notice.
    try {
      return await acquireWithin(ctx, what, lockPath, body, 0, options);
    } catch (err) {
      if (!(err instanceof LockedError)) throw err;
      busy = err.body;
    }
  }
  for (;;) {
    try {
      const left = Math.max(0, until - Date.now());
      return await acquireWithin(ctx, what, lockPath, body, left, options, (channel) => notice(noticeOf(channel, busy)));
    } catch (err) {
      if (!(err instanceof LockedError) || Date.now() >= until || options.signal?.aborted) throw err;
    }
  }
}

/** One acquire waiting up to waitMs: on a wait socket (renewing its place), or one HTTP request (a period at most). */
async function acquireWithin(
  ctx: GrantContext,
  what: LockWhat,
  lockPath: string,
  body: Record<string, unknown>,
  waitMs: number,
  options: LockOptions,
  waiting?: (channel: WaitNotice["channel"]) => void,
): Promise<Lease> {
  const sentAt = leaseClock();
  const startedAt = Date.now();
  const held = await ctx.sockets.wait(waitMs, options.signal, (socket) =>
    waitOverSocket<GrantBody>({
      ...socket,
      path: `${lockPath}/wait`,
      body,
      waitMs,
      periodMs: ctx.periodMs,
      deadline: Date.now() + waitMs + ctx.host.timeoutMs,
      signal: options.signal,
      opened: () => waiting?.("socket"),
      takeBack: (token) => void releaseHandle(ctx.host, { ...what, token }).catch(() => undefined),
    }),
  );
  if (held) return leaseOf(ctx.host, { ...what, ...grantFields(held.grant) }, sentAt, held.kept);
  // No socket, or one that never opened or broke mid-wait (nothing held): HTTP waits what is left, a period at most.
  const httpWaitMs = Math.min(ctx.periodMs, Math.max(0, waitMs - (Date.now() - startedAt)));
  if (httpWaitMs > 0) waiting?.("http");
  const deadline = Date.now() + httpWaitMs + ctx.host.timeoutMs;
  // An election's acquire is its campaign.
  const step = what.kind === "election" ? "campaign" : "acquire";
  const r = await writeOrGiveBack<GrantBody>(ctx.host, what, `${lockPath}/${step}`, { ...body, waitMs: httpWaitMs }, deadline, options.signal);
  return leaseOf(ctx.host, { ...what, ...grantFields(r) }, sentAt);
}

/**
 * A lease from a grant. Its local deadline counts from the acquire's
 * sending (the grant came at some unknown time since): after a long wait
 * that may be near or past, so such a lease is first confirmed by a
 * heartbeat, whose sending then counts, before anyone sees it.
 */
async function leaseOf(host: LeaseHost, handle: LeaseHandle, sentAt: number, kept?: KeptSocket): Promise<Lease> {
  const left = sentAt + handle.ttlMs - host.marginFor(handle.ttlMs) - leaseClock();
  if (left >= handle.ttlMs / 3) return new Lease(host, handle, sentAt, kept);
  // Counted from now only until the heartbeat below answers (it moves the deadline to its own sending).
  const lease = new Lease(host, handle, leaseClock(), kept);
  try {
    await lease.heartbeat();
  } catch (err) {
    void lease.release().catch(() => undefined);
    throw err;
  }
  return lease;
}

/**
 * An acquire or begin; if it ends without an answer (the caller's signal,
 * the deadline, an unknown outcome), the service may have granted it all
 * the same. Then, in the background, the same write is sent again with the
 * same request id and no wait, so the service recognises it and answers
 * that grant if there is one, and the grant is given back: an abandoned
 * acquire does not hold the lock for its ttl.
 */
export async function writeOrGiveBack<R extends { token?: string; state?: string }>(
  host: LeaseHost,
  what: LockWhat,
  writePath: string,
  body: Record<string, unknown>,
  deadline: number,
  signal: AbortSignal | undefined,
): Promise<R> {
  const requestId = crypto.randomUUID();
  try {
    return await host.transport.write<R>(writePath, body, { deadline, signal }, requestId);
  } catch (err) {
    const unknownOutcome = signal?.aborted || err instanceof UnreachableError || (err instanceof StoreUnavailableError && err.outcome === "unknown");
    if (unknownOutcome) {
      const again = { ...body, ...("waitMs" in body ? { waitMs: 0 } : {}) };
      void host.transport
        .write<R>(writePath, again, { deadline: Date.now() + host.timeoutMs }, requestId)
        .then((r) => (r.token && r.state !== "completed" ? releaseHandle(host, { ...what, token: r.token }) : undefined))
        .catch(() => undefined); // best effort: otherwise the grant ends at its ttl
    }
    throw err;
  }
}

/** A wait's notice, told at most once (a wait may change channel, or ask again, on its way). */
export function once(onWait: ((wait: WaitNotice) => void) | undefined): (wait: WaitNotice) => void {
  let told = false;
  return (wait) => {
    if (told || !onWait) return;
    told = true;
    onWait(wait);
  };
}

/**
 * Leading an election (client.campaign): its lease, whose `signal` aborts
 * when the term is lost (or may be), as any lease's does; `proclaim` changes
 * the value everyone sees, `resign` hands over to the next in line at once.
 */
export class Leadership {
  constructor(
    readonly lease: Lease,
    private readonly host: LeaseHost,
    private readonly path: string,
  ) {}

  get name(): string {
    return this.lease.name;
  }

  /** The term: the lease's fence, higher than every earlier leader's (pass it to a fenced resource). */
  get term(): number {
    return this.lease.fence;
  }

  get signal(): AbortSignal {
    return this.lease.signal;
  }

  /** Changes the value everyone sees, keeping the term. Throws LeaseLostError if this leader no longer leads. */
  async proclaim(value: string): Promise<{ term: number; expiresAt: number; position: number }> {
    try {
      return await this.host.transport.write(
        `${this.path}/proclaim`,
        { token: this.lease.token, value },
        { deadline: Date.now() + this.host.timeoutMs },
      );
    } catch (err) {
      // A refused proclaim may mean the term is gone: a heartbeat finds out, and aborts the signal if so.
      void this.lease.heartbeat().catch(() => undefined);
      throw err;
    }
  }

  /** Steps down: the next in line leads at once. */
  resign(): Promise<void> {
    return this.lease.release();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.resign().catch(() => undefined);
  }
}
