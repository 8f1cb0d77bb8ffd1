import { leaseClock } from "../wire/keepLease.js";
import { InProgressError, LeaseLostError, StoreUnavailableError, UnreachableError } from "./errors.js";
import { KIND_PATHS, Lease, type LeaseHandle, type LeaseHost, leasePath } from "./lease.js";
import { type KeyWaitEnd, waitOverSocket, watchKeyOverSocket } from "./socketWait.js";
import { SocketChannel } from "./waitChannel.js";
import { Operator } from "./operator.js";
import { Transport } from "./transport.js";
import {
  type BeginOptions,
  type BeginResult,
  type GrantBody,
  grantFields,
  type HoldfastClientOptions,
  type LockOptions,
  lockBody,
  type RunOnceOptions,
  type SemaphoreOptions,
} from "./clientOptions.js";

export type { BeginOptions, BeginResult, HoldfastClientOptions, LockOptions, RunOnceOptions, SemaphoreOptions } from "./clientOptions.js";

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
  /** Listing, force release and the audit log (docs/API.md "Operators"). */
  readonly operator: Operator;
  /** Waits over a wait socket where the waitChannel rule says so (waitChannel.ts). */
  private readonly sockets: SocketChannel;

  constructor(options: HoldfastClientOptions) {
    if (!options?.baseUrl) throw new TypeError("HoldfastClient needs baseUrl (the service's origin)");
    if (!options.apiKey) throw new TypeError("HoldfastClient needs apiKey");
    const margin = options.safetyMarginMs;
    this.sockets = new SocketChannel(options);
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
    const held = await this.sockets.wait(waitMs, options.signal, (socket) =>
      waitOverSocket<GrantBody>({
        ...socket,
        path: `${lockPath}/wait`,
        body,
        deadline,
        signal: options.signal,
        giveBack: (token) => void this.release({ ...what, token }).catch(() => undefined),
      }),
    );
    if (held) return new Lease(this.host, { ...what, ...grantFields(held.grant) }, sentAt, held.kept);
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
    return this.sockets.wait(waitMs, undefined, (socket) =>
      watchKeyOverSocket({
        ...socket,
        path: path("/v1/idempotency", key, "wait"),
        waitMs: Math.max(1, Math.round(waitMs)),
        deadline: Date.now() + waitMs + this.host.timeoutMs,
      }),
    );
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
