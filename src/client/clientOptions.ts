import type { ClaimOnGrant } from "../fence/claim.js";
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
  /**
   * The longest wait one request asks the service for (default 60 000 ms,
   * the service's bound): a longer waitMs renews its place in line before
   * each such period ends (docs/API.md, "Waits longer than a minute"). Lower
   * it only to try renewals out.
   */
  maxWaitPerRequestMs?: number;
}

/** Told once when a call has to wait (`onWait`): how it waits, and who is in the way as the service last said. */
export interface WaitNotice {
  /** "socket": in line on a wait socket; "http": held-open requests (an idempotency key: begin asked again). */
  channel: "socket" | "http";
  /** The label of the holder in the way (or of the key's running caller); null when it gave none or the service did not say. */
  holder: string | null;
  /** When that holder's lease ends (epoch ms, service time), or null. */
  expiresAt: number | null;
}

export interface LockOptions {
  /** The lease's length; the client heartbeats every ttlMs/3 while it is held. */
  ttlMs: number;
  /**
   * How long to wait in the lock's line (ms, default 0: try once), any
   * length: past a minute the wait renews its place in line (FIFO kept on a
   * wait socket; docs/API.md).
   */
  waitMs?: number;
  /**
   * Called once if the lock is busy and the call waits for it (then it first
   * tries once, to learn that and who holds it): a "waiting for ..." line.
   */
  onWait?: (wait: WaitNotice) => void;
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
  /**
   * Claim on grant (holdfast/fence): these resources are claimed with the new
   * lease's fence before the call answers, so an older holder's fenced write
   * is refused from then on. A refused claim gives the lease back and throws.
   */
  claim?: ClaimOnGrant;
}

export interface SemaphoreOptions extends LockOptions {
  limit: number;
  /** Permits to take (default 1). */
  permits?: number;
}

/** A slot of a flow limit (docs/API.md "Flow limit"): `concurrency`, `rate` or both; every caller of the name asks the same. */
export interface SlotOptions extends LockOptions {
  /** At most this many slots held at once. */
  concurrency?: number;
  /** At most `count` grants in any window of `perMs` (1 000 .. 86 400 000). */
  rate?: { count: number; perMs: number };
}

export interface BeginOptions {
  ttlMs: number;
  retainMs?: number;
  fingerprint?: string;
  onExpire?: string;
  /** Who works on the key, in words (as LockOptions.holder): told to callers kept waiting. */
  holder?: string;
  signal?: AbortSignal;
  /**
   * How long to wait while another caller runs the key (ms, any length;
   * default 0: InProgressError at once): its result is pushed when it
   * completes, and begin starts the key itself if that caller fails or vanishes.
   */
  waitMs?: number;
  /** Called once if the key is being run elsewhere and the call waits (see LockOptions.onWait). */
  onWait?: (wait: WaitNotice) => void;
}

export type BeginResult<T = unknown> = { state: "started"; lease: Lease } | { state: "completed"; response: T; completedAt: number; fence: number };

/** waitMs: how long to wait for another caller's run of the same key to finish (default 0: InProgressError at once). */
export type RunOnceOptions = Omit<BeginOptions, "signal">;

/** What a lease-returning call answered (the grants of every kind share these fields). */
export interface GrantBody {
  token: string;
  fence: number;
  ttlMs: number;
  expiresAt: number;
  permits?: number;
}

/** The acquire body of a lock's options (the wait's waitMs is set per request). */
export function lockBody(options: LockOptions): Record<string, unknown> {
  return { ttlMs: options.ttlMs, onExpire: options.onExpire, holder: options.holder };
}

/** What a busy answer (409 locked or in_progress) said of who is in the way, as a wait's notice. */
export function noticeOf(channel: WaitNotice["channel"], busy: Record<string, unknown> | undefined): WaitNotice {
  return {
    channel,
    holder: typeof busy?.holder === "string" ? busy.holder : null,
    expiresAt: typeof busy?.expiresAt === "number" ? busy.expiresAt : null,
  };
}

/** What a lease keeps of a grant's answer. */
export function grantFields(r: GrantBody) {
  const fields = { token: r.token, fence: r.fence, ttlMs: r.ttlMs, expiresAt: r.expiresAt };
  return r.permits === undefined ? fields : { ...fields, permits: r.permits };
}
