import { leaseClock } from "../wire/keepLease.js";
import { InProgressError, LeaseLostError, StoreUnavailableError, UnreachableError } from "./errors.js";
import { KIND_PATHS, Lease, type LeaseHandle, type LeaseHost, leasePath } from "./lease.js";
import { type KeyWaitEnd, runtimeWebSocket, SocketUnavailableError, type WaitChannel, waitOverSocket, watchKeyOverSocket } from "./socketWait.js";
import { Operator } from "./operator.js";
import { Transport } from "./transport.js";

export interface HoldfastClientOptions {
  /** The service's origin, e.g. https://locks.example.com */
  baseUrl: string;
  apiKey: string;
  /** A fetch to use instead of the global one (a service binding's, a test's). */
  fetch?: typeof fetch;
  /** How long one call may take, retries included, beyond any waitMs (default 10 s). */
  timeoutMs?: number;
  /**
   * How long before a lease's local deadline its signal aborts when no
   * heartbeat was confirmed (default: 10% of ttlMs, at least 100 ms, at most
   * 2 s): time to stop work before anyone else can hold the lease.
   */
  safetyMarginMs?: number;
  /**
   * How a lock, read-write lock or semaphore waits (waitMs > 0) in its line:
   * "socket" over a wait socket (a WebSocket to the lock's object: a client
   * that goes away leaves the line at once, a handoff is one hop), "http" as
   * a held-open POST, or "auto" (default): a socket where the runtime has a
   * WebSocket (Workers, browsers, Deno, Node 22+) and the service accepts
   * one, else HTTP. A try (waitMs 0) is always one HTTP request.
   */
  waitChannel?: WaitChannel;
  /** The WebSocket to use instead of the global one (Node 20 with the `ws` package, a test's). */
  WebSocket?: typeof WebSocket;
}

export interface LockOptions {
  /** The lease's length; the client heartbeats every ttlMs/3 while it is held. */
  ttlMs: number;
  /** How long to wait in the lock's line (0 .. 60 000 ms, default 0: try once). */
  waitMs?: number;
  /** Stops waiting (the lock is then not acquired). */
  signal?: AbortSignal;
  /** Where the service POSTs a signed notice if this lease lapses without release. */
  onExpire?: string;
  /**
   * A holder label (1-256 printable characters), e.g. "report-worker@host-3
   * pid 4121": shown by `inspect` and in the 409 another caller gets
   * (LockedError.body.holder), and carried in expiry notifications.
   */
  holder?: string;
}

export interface SemaphoreOptions extends LockOptions {
  limit: number;
  /** Permits to take (default 1). */
  permits?: number;
}

export interface BeginOptions {
  ttlMs: number;
  retainMs?: number;
  fingerprint?: string;
  onExpire?: string;
  /** Who works on the key, in words (as LockOptions.holder): told to callers kept waiting. */
  holder?: string;
  signal?: AbortSignal;
}

export type BeginResult<T = unknown> = { state: "started"; lease: Lease } | { state: "completed"; response: T; completedAt: number; fence: number };

export interface RunOnceOptions extends Omit<BeginOptions, "signal"> {
  /** How long to wait for another caller's run of the same key to finish (default 0: InProgressError at once). */
  waitMs?: number;
}

/** What a lease-returning call answered (the grants of every kind share these fields). */
interface GrantBody {
  token: string;
  fence: number;
  ttlMs: number;
  expiresAt: number;
  permits?: number;
}

const path = (base: string, name: string, ...rest: string[]) => [base, encodeURIComponent(name), ...rest].join("/");

/**
 * The holdfast client: locks whose leases are heartbeated for you, with a
 * signal that says when one is lost (or may be) before anyone else can hold
 * it, retries that apply once, and leases that travel between processes.
 * Runs wherever fetch runs: Workers, Node 20+, Deno.
 *
 *   const client = new HoldfastClient({ baseUrl, apiKey });
 *   await client.withLock("nightly-report", { ttlMs: 30_000 }, async (lease) => {
 *     await build({ signal: lease.signal, fence: lease.fence });
 *   });
 */
export class HoldfastClient {
  private readonly host: LeaseHost;
  private readonly options: HoldfastClientOptions;
  /** Listing, force release and the audit log (docs/API.md "Operators"). */
  readonly operator: Operator;
  /** "auto" found that the service (or the way to it) takes no wait sockets: HTTP from then on. */
  private socketsRefused = false;

  constructor(options: HoldfastClientOptions) {
    if (!options?.baseUrl) throw new TypeError("HoldfastClient needs baseUrl (the service's origin)");
    if (!options.apiKey) throw new TypeError("HoldfastClient needs apiKey");
    const margin = options.safetyMarginMs;
    this.options = options;
    this.host = {
      transport: new Transport(options),
      timeoutMs: options.timeoutMs ?? 10_000,
      marginFor: (ttlMs) => margin ?? Math.min(2000, Math.max(100, Math.round(ttlMs / 10))),
    };
    this.operator = new Operator(this.host.transport, this.host.timeoutMs);
  }

  /** Takes the mutex `name`. Throws LockedError (with retryAfterMs) when it is not granted within waitMs. */
  /** `lockDelayMs`: if this lease lapses (no release), nobody gets the lock for that long after (0 .. 60 000). */
  lock(name: string, options: LockOptions & { lockDelayMs?: number }): Promise<Lease> {
    const body = { ...lockBody(options), lockDelayMs: options.lockDelayMs };
    return this.acquire({ kind: "mutex", name }, path("/v1/locks", name), body, options);
  }

  readLock(name: string, options: LockOptions): Promise<Lease> {
    return this.acquire({ kind: "rwlock", name, mode: "read" }, path("/v1/rwlocks", name, "read"), lockBody(options), options);
  }

  writeLock(name: string, options: LockOptions): Promise<Lease> {
    return this.acquire({ kind: "rwlock", name, mode: "write" }, path("/v1/rwlocks", name, "write"), lockBody(options), options);
  }

  /** Takes `permits` (default 1) of the counting semaphore `name`, whose holders all use `limit`. */
  semaphore(name: string, options: SemaphoreOptions): Promise<Lease> {
    const body = { ...lockBody(options), limit: options.limit, permits: options.permits ?? 1 };
    return this.acquire({ kind: "semaphore", name }, path("/v1/semaphores", name), body, options);
  }

  /** Runs fn holding the mutex, with the lease (its signal and fence); releases after, whatever happens. */
  withLock<T>(name: string, options: LockOptions, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
    return this.holding(this.lock(name, options), fn);
  }

  withReadLock<T>(name: string, options: LockOptions, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
    return this.holding(this.readLock(name, options), fn);
  }

  withWriteLock<T>(name: string, options: LockOptions, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
    return this.holding(this.writeLock(name, options), fn);
  }

  withSemaphore<T>(name: string, options: SemaphoreOptions, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
    return this.holding(this.semaphore(name, options), fn);
  }

  /**
   * Starts the work of an idempotency key: `started` with a heartbeated
   * lease (complete or fail it), or `completed` with the stored response.
   * Throws InProgressError while someone else runs it.
   */
  async begin<T = unknown>(key: string, options: BeginOptions): Promise<BeginResult<T>> {
    const sentAt = leaseClock();
    const body = {
      ttlMs: options.ttlMs,
      retainMs: options.retainMs,
      fingerprint: options.fingerprint,
      onExpire: options.onExpire,
      holder: options.holder,
    };
    const r = await this.writeOrGiveBack<{ state: string; response?: T; completedAt?: number } & GrantBody>(
      { kind: "idempotency", name: key },
      path("/v1/idempotency", key, "begin"),
      body,
      Date.now() + this.host.timeoutMs,
      options.signal,
    );
    if (r.state === "completed") return { state: "completed", response: r.response as T, completedAt: r.completedAt as number, fence: r.fence };
    return { state: "started", lease: new Lease(this.host, { kind: "idempotency", name: key, ...grantFields(r) }, sentAt) };
  }

  /** Stores the key's result (kept retainMs) and ends its lease. */
  async complete(lease: Lease | LeaseHandle, response: unknown): Promise<{ completedAt: number }> {
    try {
      const r = await this.host.transport.write<{ completedAt: number }>(
        path("/v1/idempotency", lease.name, "complete"),
        { token: lease.token, response: response === undefined ? null : response },
        { deadline: Date.now() + this.host.timeoutMs },
      );
      return { completedAt: r.completedAt };
    } finally {
      // Stored or not, this process stops keeping it: a complete that failed leaves the key
      // to lapse at its ttl (another caller then runs it), never held for as long as we live.
      if (lease instanceof Lease) lease.detach();
    }
  }

  /** Gives the key up so it can be begun again. */
  async fail(lease: Lease | LeaseHandle): Promise<void> {
    if (lease instanceof Lease) return lease.release();
    await this.release(lease);
  }

  /**
   * Runs fn once per key across every caller: the first runs it (heartbeated)
   * and stores its result; later callers get the stored result. If fn throws,
   * the key is failed (it may run again) and the error rethrown.
   */
  async runOnce<T>(key: string, fn: (lease: Lease) => Promise<T> | T, options: RunOnceOptions): Promise<T> {
    const until = Date.now() + (options.waitMs ?? 0);
    for (;;) {
      let begun: BeginResult<T>;
      try {
        begun = await this.begin<T>(key, options);
      } catch (err) {
        // Waiting begins again rather than inspects: if the running caller fails or vanishes, we take over.
        if (!(err instanceof InProgressError) || Date.now() >= until) throw err;
        const ended = await this.awaitKeyEnd(key, until - Date.now());
        if (ended?.state === "completed") return ended.response as T;
        if (ended?.state === "timeout") throw err;
        if (!ended) await new Promise((r) => setTimeout(r, Math.max(1, Math.min(err.retryAfterMs, 1000, until - Date.now()))));
        continue;
      }
      if (begun.state === "completed") return begun.response;
      const result = await runOrGiveBack(begun.lease, fn);
      await this.complete(begun.lease, result);
      return result;
    }
  }

  /**
   * A lease from its handle (`lease.toJSON()`), in this process: heartbeats
   * it at once (so its local deadline is known) and then keeps it like any
   * other. Throws LeaseLostError when it is no longer held.
   */
  async resume(handle: LeaseHandle): Promise<Lease> {
    const sentAt = leaseClock();
    const r = await this.host.transport.write<{ expiresAt: number }>(
      leasePath(handle, "heartbeat"),
      { token: handle.token, ttlMs: handle.ttlMs },
      { deadline: Date.now() + this.host.timeoutMs },
    );
    return new Lease(this.host, { ...handle, expiresAt: r.expiresAt }, sentAt);
  }

  /** Releases a lease by its handle without keeping it (an operator's release). */
  async release(handle: Pick<LeaseHandle, "kind" | "name" | "token" | "mode">): Promise<unknown> {
    return this.host.transport.write(leasePath(handle, "release"), { token: handle.token }, { deadline: Date.now() + this.host.timeoutMs });
  }

  /** The state of a lock as GET answers it (never its token). */
  inspect(kind: LeaseHandle["kind"], name: string): Promise<Record<string, unknown>> {
    return this.host.transport.read(path(KIND_PATHS[kind], name), { deadline: Date.now() + this.host.timeoutMs });
  }

  /** An acquire of `lockPath` (the lock's path; `/acquire` over HTTP, `/wait` over a socket). */
  private async acquire(
    what: Pick<LeaseHandle, "kind" | "name" | "mode">,
    lockPath: string,
    body: Record<string, unknown>,
    options: LockOptions,
  ): Promise<Lease> {
    const sentAt = leaseClock();
    const waitMs = options.waitMs ?? 0;
    const deadline = Date.now() + waitMs + this.host.timeoutMs;
    const startedAt = Date.now();
    const grant = await this.viaSocket(waitMs, options.signal, (socket) =>
      waitOverSocket<GrantBody>({
        ...socket,
        path: `${lockPath}/wait`,
        body,
        deadline,
        signal: options.signal,
        giveBack: (token) => void this.release({ ...what, token }).catch(() => undefined),
      }),
    );
    if (grant) return new Lease(this.host, { ...what, ...grantFields(grant) }, sentAt);
    // No socket, or one that never opened or broke mid-wait (nothing held): HTTP waits what is left.
    const httpBody = { ...body, waitMs: Math.max(0, waitMs - (Date.now() - startedAt)) };
    const r = await this.writeOrGiveBack<GrantBody>(what, `${lockPath}/acquire`, httpBody, deadline, options.signal);
    return new Lease(this.host, { ...what, ...grantFields(r) }, sentAt);
  }

  /**
   * Waits on the key's wait socket for the running caller's end: its result
   * is pushed, no polling. Undefined where no socket can be used (then the
   * caller polls begin).
   */
  private awaitKeyEnd(key: string, waitMs: number): Promise<KeyWaitEnd | undefined> {
    return this.viaSocket(waitMs, undefined, (socket) =>
      watchKeyOverSocket({
        ...socket,
        path: path("/v1/idempotency", key, "wait"),
        waitMs: Math.max(1, Math.round(waitMs)),
        deadline: Date.now() + waitMs + this.host.timeoutMs,
      }),
    );
  }

  /**
   * One wait over a wait socket, by the waitChannel rule: undefined when it
   * should go over HTTP instead (no socket here, or with "auto" one that did
   * not open, which is remembered, or broke before the end, which left
   * nothing held). With "socket" a failure is the caller's error.
   */
  private async viaSocket<T>(
    waitMs: number,
    signal: AbortSignal | undefined,
    wait: (socket: { baseUrl: string; apiKey: string; WebSocket: typeof WebSocket }) => Promise<T>,
  ): Promise<T | undefined> {
    const WebSocketImpl = this.socketChannel(waitMs);
    if (!WebSocketImpl) return undefined;
    try {
      return await wait({ baseUrl: this.options.baseUrl.replace(/\/+$/, ""), apiKey: this.options.apiKey, WebSocket: WebSocketImpl });
    } catch (err) {
      const forced = this.options.waitChannel === "socket";
      if (err instanceof SocketUnavailableError && !forced) this.socketsRefused = true;
      if (forced || !(err instanceof UnreachableError) || signal?.aborted) throw err;
      return undefined;
    }
  }

  /** The WebSocket to wait with, or undefined to wait over HTTP (see waitChannel). */
  private socketChannel(waitMs: number): typeof WebSocket | undefined {
    const channel = this.options.waitChannel ?? "auto";
    if (waitMs <= 0 || channel === "http" || (channel === "auto" && this.socketsRefused)) return undefined;
    const impl = this.options.WebSocket ?? runtimeWebSocket();
    if (!impl && channel === "socket") throw new TypeError('waitChannel "socket" needs a WebSocket: this runtime has none (pass one as WebSocket)');
    return impl;
  }

  /**
   * An acquire or begin; if it ends without an answer (the caller's signal,
   * the deadline, an unknown outcome), the service may have granted it all
   * the same. Then, in the background, the same write is sent again with the
   * same request id and no wait, so the service recognises it and answers
   * that grant if there is one, and the grant is given back: an abandoned
   * acquire does not hold the lock for its ttl.
   */
  private async writeOrGiveBack<R extends { token?: string; state?: string }>(
    what: Pick<LeaseHandle, "kind" | "name" | "mode">,
    writePath: string,
    body: Record<string, unknown>,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<R> {
    const requestId = crypto.randomUUID();
    try {
      return await this.host.transport.write<R>(writePath, body, { deadline, signal }, requestId);
    } catch (err) {
      const unknownOutcome =
        signal?.aborted || err instanceof UnreachableError || (err instanceof StoreUnavailableError && err.outcome === "unknown");
      if (unknownOutcome) {
        const again = { ...body, ...("waitMs" in body ? { waitMs: 0 } : {}) };
        void this.host.transport
          .write<R>(writePath, again, { deadline: Date.now() + this.host.timeoutMs }, requestId)
          .then((r) => (r.token && r.state !== "completed" ? this.release({ ...what, token: r.token }) : undefined))
          .catch(() => undefined); // best effort: otherwise the grant ends at its ttl
      }
      throw err;
    }
  }

  private async holding<T>(acquired: Promise<Lease>, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
    const lease = await acquired;
    const result = await runOrGiveBack(lease, fn);
    try {
      await lease.release();
    } catch (err) {
      if (!(err instanceof LeaseLostError)) throw err; // lost: the signal said so while fn ran
    }
    return result;
  }
}

/** fn with the lease; if it throws, the lease is given back (released, or failed) and fn's error is the one reported. */
async function runOrGiveBack<T>(lease: Lease, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
  try {
    return await fn(lease);
  } catch (err) {
    await lease.release().catch(() => undefined);
    throw err;
  }
}

function lockBody(options: LockOptions): Record<string, unknown> {
  return { ttlMs: options.ttlMs, waitMs: options.waitMs ?? 0, onExpire: options.onExpire, holder: options.holder };
}

function grantFields(r: GrantBody) {
  const fields = { token: r.token, fence: r.fence, ttlMs: r.ttlMs, expiresAt: r.expiresAt };
  return r.permits === undefined ? fields : { ...fields, permits: r.permits };
}
