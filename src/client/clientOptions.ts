import type { Lease } from "./lease.js";
import type { WaitChannel } from "./socketWait.js";

/** What the client takes and answers (HoldfastClient.ts), and the bodies it sends and reads. */

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
export interface GrantBody {
  token: string;
  fence: number;
  ttlMs: number;
  expiresAt: number;
  permits?: number;
}

/** The acquire body of a lock's options. */
export function lockBody(options: LockOptions): Record<string, unknown> {
  return { ttlMs: options.ttlMs, waitMs: options.waitMs ?? 0, onExpire: options.onExpire, holder: options.holder };
}

/** What a lease keeps of a grant's answer. */
export function grantFields(r: GrantBody) {
  const fields = { token: r.token, fence: r.fence, ttlMs: r.ttlMs, expiresAt: r.expiresAt };
  return r.permits === undefined ? fields : { ...fields, permits: r.permits };
}
