import { keepLease, type LeaseKeeper, leaseClock } from "../wire/keepLease.js";
import { LeaseLostError, LeaseReleasedError } from "./errors.js";
import { type KeptSocket, KeptSocketBrokenError } from "./keptSocket.js";
import type { Transport } from "./transport.js";

// Declared here too for consumers whose TypeScript lib predates explicit
// resource management (ES2022), so the .d.ts compiles for them; it merges
// with lib.esnext.disposable's and @types/node's declaration.
declare global {
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol;
  }
}

/** The kinds a lease may be of, as the API names them (the `kind` of a listing, an audit entry, a notification). */
export const LEASE_KINDS = ["mutex", "rwlock", "semaphore", "idempotency", "flow", "election"] as const;
export type LeaseKind = (typeof LEASE_KINDS)[number];

/**
 * A lease as plain JSON: what another process needs to heartbeat or release
 * it (`client.resume(handle)`). It holds the token, so treat it as a secret.
 */
export interface LeaseHandle {
  kind: LeaseKind;
  name: string;
  token: string;
  fence: number;
  /** When the lease ends, on the service's clock (epoch ms), as of the last heartbeat this client saw. */
  expiresAt: number;
  ttlMs: number;
  /** The read-write lock's mode. */
  mode?: "read" | "write";
  /** The semaphore's permits. */
  permits?: number;
}

/** What a lease needs of its client. */
export interface LeaseHost {
  transport: Transport;
  /** How long one call may take (ms). */
  timeoutMs: number;
  /** How long before the local deadline the signal aborts, for a lease of ttlMs. */
  marginFor(ttlMs: number): number;
}

/** Where each kind is mounted in the service's API. */
export const KIND_PATHS: Record<LeaseKind, string> = {
  mutex: "/v1/locks",
  rwlock: "/v1/rwlocks",
  semaphore: "/v1/semaphores",
  idempotency: "/v1/idempotency",
  flow: "/v1/flows",
  election: "/v1/elections",
};

/** The service paths of a lease's operations. */
export function leasePath(handle: Pick<LeaseHandle, "kind" | "name" | "mode">, op: "heartbeat" | "release"): string {
  const base = `${KIND_PATHS[handle.kind]}/${encodeURIComponent(handle.name)}`;
  if (handle.kind === "idempotency") return `${base}/${op === "release" ? "fail" : "heartbeat"}`;
  if (handle.kind === "election") return `${base}/${op === "release" ? "resign" : "heartbeat"}`;
  if (handle.kind === "rwlock" && op === "release" && handle.mode) return `${base}/${handle.mode}/release`;
  return `${base}/${op}`;
}

/**
 * A held lease. While it is held the client heartbeats it every ttlMs/3.
 * `signal` aborts when the service says the lease is lost, or, when no
 * heartbeat has been confirmed, a margin before the local deadline (the
 * time the last confirmed acquire or heartbeat was sent + ttlMs): before
 * anyone else can hold it. It also aborts on release. Heartbeat failures
 * never surface as unhandled rejections; they show as the signal.
 *
 *   await using lease = await client.lock("nightly", { ttlMs: 10_000 });
 *   await work({ signal: lease.signal, fence: lease.fence });
 */
export class Lease {
  readonly kind: LeaseKind;
  readonly name: string;
  readonly token: string;
  readonly fence: number;
  readonly ttlMs: number;
  readonly mode?: "read" | "write";
  readonly permits?: number;
  /** When the lease ends on the service's clock, as of the last heartbeat. */
  expiresAt: number;
  private readonly keeper: LeaseKeeper;
  private readonly released = new AbortController();
  private readonly combined: AbortSignal;
  private ended = false;

  /**
   * @param sentAt leaseClock() when the acquire (or the confirming heartbeat) was sent
   * @param kept   the wait socket it was granted on, kept open: heartbeats and the release go over it while it lasts
   */
  constructor(
    private readonly host: LeaseHost,
    handle: LeaseHandle,
    sentAt: number,
    private readonly kept?: KeptSocket,
  ) {
    this.kind = handle.kind;
    this.name = handle.name;
    this.token = handle.token;
    this.fence = handle.fence;
    this.ttlMs = handle.ttlMs;
    this.expiresAt = handle.expiresAt;
    if (handle.mode) this.mode = handle.mode;
    if (handle.permits !== undefined) this.permits = handle.permits;
    const interval = Math.max(1, Math.floor(this.ttlMs / 3));
    this.keeper = keepLease({
      ttlMs: this.ttlMs,
      since: sentAt,
      marginMs: host.marginFor(this.ttlMs),
      // One heartbeat, with its retries, takes at most one interval: the next tick tries again.
      heartbeat: (signal) =>
        this.sendHeartbeat(Date.now() + interval, signal).then(
          () => "ok" as const,
          (err) => {
            if (err instanceof LeaseLostError) return "lost" as const;
            throw err;
          },
        ),
      lostError: (kind, message) => new LeaseLostError(message, kind === "lost"),
    });
    const both = new AbortController();
    const forward = (s: AbortSignal) => () => {
      if (!both.signal.aborted) both.abort(s.reason);
    };
    this.keeper.signal.addEventListener("abort", forward(this.keeper.signal), { once: true });
    this.released.signal.addEventListener("abort", forward(this.released.signal), { once: true });
    this.combined = both.signal;
    // A lost lease has nothing more to say on its socket.
    this.keeper.signal.addEventListener("abort", () => this.kept?.close(), { once: true });
  }

  /**
   * Claim `resource` with this lease's fence (holdfast/fence): from now on
   * the resource refuses any write with an older fence, before this holder
   * has written anything. `store` is the resource's fence helper, e.g.
   * `await lease.claim(new RedisFence(redis), "orders:42")`. Throws the
   * store's StaleFenceError if a newer lease already claimed it.
   */
  claim<R>(store: { claim(resource: string, fence: number): Promise<R> }, resource: string): Promise<R> {
    return store.claim(resource, this.fence);
  }

  /**
   * How its heartbeats and release go: "socket" over the wait socket it was
   * granted on (kept open; a release there hands the lock to the next waiter
   * in one step), "http" otherwise, and for good once that socket broke.
   */
  get channel(): "socket" | "http" {
    return this.kept?.open ? "socket" : "http";
  }

  /** Aborts when the lease is lost or may be (reason: LeaseLostError), or is released (LeaseReleasedError). */
  get signal(): AbortSignal {
    return this.combined;
  }

  /**
   * Extends the lease by its ttlMs now (the client also does this for you).
   * Throws LeaseLostError if it is gone.
   */
  async heartbeat(): Promise<{ expiresAt: number }> {
    const sentAt = leaseClock();
    try {
      await this.sendHeartbeat(Date.now() + this.host.timeoutMs);
    } catch (err) {
      if (err instanceof LeaseLostError) this.keeper.lost();
      throw err;
    }
    this.keeper.confirmed(sentAt);
    return { expiresAt: this.expiresAt };
  }

  /**
   * Gives the lease back (an idempotency key: fails it, so it can run
   * again). Safe to call twice. Throws LeaseLostError if the service says
   * the token no longer held it.
   */
  async release(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const deadline = Date.now() + this.host.timeoutMs;
    // On its socket the release goes out first: the next waiter is handed the lock as it arrives, and the rest here waits.
    const onSocket = this.kept?.open ? this.kept.release(deadline) : undefined;
    this.keeper.stop();
    this.released.abort(new LeaseReleasedError());
    const sentOnSocket = onSocket !== undefined;
    if (onSocket) {
      try {
        return await onSocket;
      } catch (err) {
        if (!(err instanceof KeptSocketBrokenError)) throw err;
      }
    }
    try {
      await this.host.transport.write(leasePath(this, "release"), { token: this.token }, { deadline });
    } catch (err) {
      // The socket broke with the release on it: it may have been done there, and then this one finds nothing held.
      if (!(sentOnSocket && err instanceof LeaseLostError)) throw err;
    }
  }

  /** `await using`: releases on scope exit; a lease already lost has nothing to release. */
  async [Symbol.asyncDispose](): Promise<void> {
    try {
      await this.release();
    } catch (err) {
      if (!(err instanceof LeaseLostError)) throw err;
    }
  }

  /**
   * Stops keeping the lease here without releasing it: hand `toJSON()` to
   * another process, which resumes it. The signal aborts (LeaseReleasedError).
   */
  detach(): void {
    if (this.ended) return;
    this.ended = true;
    this.keeper.stop();
    this.kept?.close();
    this.released.abort(new LeaseReleasedError());
  }

  toJSON(): LeaseHandle {
    const handle: LeaseHandle = {
      kind: this.kind,
      name: this.name,
      token: this.token,
      fence: this.fence,
      expiresAt: this.expiresAt,
      ttlMs: this.ttlMs,
    };
    if (this.mode) handle.mode = this.mode;
    if (this.permits !== undefined) handle.permits = this.permits;
    return handle;
  }

  // Always by this lease's own ttlMs, named (not the service's default, which a re-entry with
  // another ttl would change): the local deadline then matches the service's.
  private async sendHeartbeat(deadline: number, signal?: AbortSignal): Promise<void> {
    if (this.kept?.open) {
      try {
        this.expiresAt = (await this.kept.heartbeat(this.ttlMs, deadline)).expiresAt;
        return;
      } catch (err) {
        // Broken: HTTP for this heartbeat and the rest of the lease (a heartbeat is safe to send twice),
        // unless the lease stopped being kept meanwhile (released, detached, lost).
        if (!(err instanceof KeptSocketBrokenError) || signal?.aborted) throw err;
      }
    }
    const body = { token: this.token, ttlMs: this.ttlMs };
    const r = await this.host.transport.write<{ expiresAt: number }>(leasePath(this, "heartbeat"), body, { deadline, signal });
    this.expiresAt = r.expiresAt;
  }
}
