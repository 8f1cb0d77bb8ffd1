import { leaseClock } from "../wire/keepLease.js";
import type {
  BeginOptions,
  BeginResult,
  HoldfastClientOptions,
  LockOptions,
  RunOnceOptions,
  SemaphoreOptions,
  SlotOptions,
} from "./clientOptions.js";
import { nameSegment } from "./names.js";
import { lockBody } from "./clientOptions.js";
import { ElectionObserver } from "./watch.js";
import { LeaseLostError, StoreUnavailableError } from "./errors.js";
import { acquireLease, type GrantContext, Leadership, releaseHandle } from "./grants.js";
import { serviceKeys, type ServiceKeys } from "./idempotencyKeys.js";
import { beginKey } from "./keyRuns.js";
import { KIND_PATHS, Lease, type LeaseHandle, type LeaseHost, leasePath } from "./lease.js";
import { Operator } from "./operator.js";
import { Transport } from "./transport.js";
import { SocketChannel } from "./waitChannel.js";
import { runtimeWebSocket } from "./socketWait.js";
import { LockWatch, type LockState, type StatePush, type WatchOptions } from "./watch.js";

/** The service's bound on one request's waitMs: a longer wait renews its place in line (socket) or asks again (HTTP). */
const MAX_WAIT_PER_REQUEST_MS = 60_000;

const path = (base: string, name: string, ...rest: string[]) => [base, nameSegment(name), ...rest].join("/");

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
  /** What acquires and begins need (grants.ts). */
  private readonly grants: GrantContext;

  constructor(options: HoldfastClientOptions) {
    if (!options?.baseUrl) throw new TypeError("HoldfastClient needs baseUrl (the service's origin)");
    if (!options.apiKey) throw new TypeError("HoldfastClient needs apiKey");
    const margin = options.safetyMarginMs;
    this.host = {
      transport: new Transport(options),
      timeoutMs: options.timeoutMs ?? 10_000,
      marginFor: (ttlMs) => margin ?? Math.min(2000, Math.max(100, Math.round(ttlMs / 10))),
    };
    this.operator = new Operator(this.host.transport, this.host.timeoutMs);
    const periodMs = Math.max(1, Math.min(MAX_WAIT_PER_REQUEST_MS, options.maxWaitPerRequestMs ?? MAX_WAIT_PER_REQUEST_MS));
    this.grants = { host: this.host, sockets: new SocketChannel(options), periodMs };
    this.options = options;
  }

  private readonly options: HoldfastClientOptions;

  /**
   * A lock's state pushed on every change, the first at once (docs/API.md, "Watching a lock"):
   * `for await (const state of client.watch("mutex", name))`, or onState; close() ends it.
   */
  watch(kind: LeaseHandle["kind"], name: string, onState?: (state: LockState) => void): LockWatch {
    // Not checked here: a name the service refuses ends the watch with the probe's typed error (inspect checks it).
    return this.openWatch(kind, name, { onState, probe: () => this.inspect(kind, name) });
  }

  private openWatch(kind: LeaseHandle["kind"], name: string, how: Pick<WatchOptions, "query" | "onState" | "probe">): LockWatch {
    const WebSocket = this.options.WebSocket ?? runtimeWebSocket();
    if (!WebSocket) throw new TypeError("watch needs a WebSocket: this runtime has none (pass one as WebSocket)");
    const { baseUrl, apiKey } = this.options;
    return new LockWatch({ baseUrl, apiKey, WebSocket, path: `${KIND_PATHS[kind]}/${encodeURIComponent(name)}`, ...how });
  }

  /**
   * Campaigns in the election `name` (docs/API.md, "Elections"): leads, or waits in line up to waitMs
   * (LockedError after). `value` (1 to 4096 bytes) is what everyone sees while this one leads.
   */
  async campaign(name: string, options: Omit<LockOptions, "holder" | "onExpire"> & { value: string; lockDelayMs?: number }): Promise<Leadership> {
    const at = path("/v1/elections", name);
    const body = { ttlMs: options.ttlMs, value: options.value, lockDelayMs: options.lockDelayMs };
    return new Leadership(await acquireLease(this.grants, { kind: "election", name }, at, body, options), this.host, at);
  }

  /**
   * Every change of the election `name` (a new leader, a new value), in order, each once:
   * `for await (const change of client.observe(name))`; it reconnects and resumes by itself.
   * From the current leader's change on, or after position `since`.
   */
  observe(name: string, options: { since?: number } = {}): ElectionObserver {
    const at = path("/v1/elections", name);
    // A socket that did not open: the history's read at its position says why (400 invalid_position ends
    // the observer); a store away (503), as a service unreachable, is tried again.
    const probe = (since: number) =>
      this.host.transport.read(`${at}/changes?since=${since}`, { deadline: Date.now() + this.host.timeoutMs }).catch((err) => {
        if (!(err instanceof StoreUnavailableError)) throw err;
      });
    const openAt = (since: () => number, onPush: (push: StatePush) => void) =>
      this.openWatch("election", name, { query: () => `?since=${since()}`, onState: (_state, push) => onPush(push), probe: () => probe(since()) });
    return new ElectionObserver(openAt, options.since);
  }

  /** Takes the mutex `name`. Throws LockedError (with retryAfterMs) when it is not granted within waitMs. */
  /** `lockDelayMs`: if this lease lapses (no release), nobody gets the lock for that long after (0 .. 60 000). */
  async lock(name: string, options: LockOptions & { lockDelayMs?: number }): Promise<Lease> {
    const body = { ...lockBody(options), lockDelayMs: options.lockDelayMs };
    return acquireLease(this.grants, { kind: "mutex", name }, path("/v1/locks", name), body, options);
  }

  async readLock(name: string, options: LockOptions): Promise<Lease> {
    return acquireLease(this.grants, { kind: "rwlock", name, mode: "read" }, path("/v1/rwlocks", name, "read"), lockBody(options), options);
  }

  async writeLock(name: string, options: LockOptions): Promise<Lease> {
    return acquireLease(this.grants, { kind: "rwlock", name, mode: "write" }, path("/v1/rwlocks", name, "write"), lockBody(options), options);
  }

  /** Takes `permits` (default 1) of the counting semaphore `name`, whose holders all use `limit`. */
  async semaphore(name: string, options: SemaphoreOptions): Promise<Lease> {
    const body = { ...lockBody(options), limit: options.limit, permits: options.permits ?? 1 };
    return acquireLease(this.grants, { kind: "semaphore", name }, path("/v1/semaphores", name), body, options);
  }

  /** Takes a slot of the flow limit `name`: granted while fewer than `concurrency` are held and fewer than `rate.count` started in the last `rate.perMs`. */
  async slot(name: string, options: SlotOptions): Promise<Lease> {
    const body = { ...lockBody(options), concurrency: options.concurrency, rate: options.rate };
    return acquireLease(this.grants, { kind: "flow", name }, path("/v1/flows", name), body, options);
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

  /** Runs fn holding a slot of the flow limit `name` (slot); gives it back after, whatever happens. */
  withSlot<T>(name: string, options: SlotOptions, fn: (lease: Lease) => Promise<T> | T): Promise<T> {
    return this.holding(this.slot(name, options), fn);
  }

  /**
   * Starts the work of an idempotency key: `started` with a heartbeated
   * lease (complete or fail it), or `completed` with the stored response.
   * Throws InProgressError while someone else runs it past `waitMs`.
   */
  begin<T = unknown>(key: string, options: BeginOptions): Promise<BeginResult<T>> {
    return beginKey<T>(this.grants, key, options);
  }

  /**
   * This service's idempotency keys as `idempotent()` (holdfast) keeps them, so an app with no
   * Redis of its own passes the client: `idempotent(handler, { client, ttlMs })`. Steps by token,
   * no waiting; its errors are the library's. For your own code, begin / complete / fail.
   */
  idempotencyKeys(): ServiceKeys {
    return serviceKeys(this.host);
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
    const begun = await this.begin<T>(key, options);
    if (begun.state === "completed") return begun.response;
    const result = await runOrGiveBack(begun.lease, fn);
    await this.complete(begun.lease, result);
    return result;
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
    return releaseHandle(this.host, handle);
  }

  /**
   * The state of a lock as GET answers it (never its token): the mutex
   * `name`, or `name` of `kind` ("mutex", "rwlock", "semaphore", "idempotency").
   */
  inspect(name: string): Promise<Record<string, unknown>>;
  inspect(kind: LeaseHandle["kind"], name: string): Promise<Record<string, unknown>>;
  async inspect(kindOrName: string, name?: string): Promise<Record<string, unknown>> {
    const kind = name === undefined ? "mutex" : kindOrName;
    if (!Object.hasOwn(KIND_PATHS, kind)) {
      const kinds = Object.keys(KIND_PATHS).join(", ");
      return Promise.reject(new TypeError(`inspect(kind, name): no kind ${JSON.stringify(kind)}; use one of ${kinds}, or inspect(name) for a mutex`));
    }
    const lockPath = path(KIND_PATHS[kind as LeaseHandle["kind"]], name ?? kindOrName);
    return this.host.transport.read(lockPath, { deadline: Date.now() + this.host.timeoutMs });
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
