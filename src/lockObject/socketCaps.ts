import type { Env } from "../env.js";
import { RateLimitedError } from "../errors.js";
import { SOCKETS_PER_NAMESPACE_DEFAULT, WAITERS_PER_LOCK_DEFAULT } from "../limits.js";
import { logError } from "../logError.js";
import type { SocketAt } from "../wire/socketProtocol.js";

/** How soon a refused waiter may try again: a waiter ahead leaves within its waitMs, often much sooner. */
const CROWDED_RETRY_MS = 1000;
/** How long after a socket ends its lock object tells the namespace object (ends meanwhile are told together). */
const TELL_AFTER_MS = 250;
/** A lock object with sockets open tells its namespace object again at least this often (below SOCKETS_TOLD_FOR_MS). */
const TELL_AGAIN_MS = 5 * 60 * 1000;

/**
 * The caps on waiting (docs/API.md, "Limits of a wait socket"): waiters on
 * one lock (sockets and held-open requests), and wait sockets of one
 * namespace over all its locks, counted by its namespace object from what
 * each lock object tells it. A refusal comes before any socket: 429
 * `rate_limited` with `retryAfterMs` and the cap it met, and the waiters
 * already there lose nothing. The namespace's count is approximate (each
 * lock object tells its own after the fact; a count not told again lapses),
 * which errs towards letting a socket in.
 */
export class SocketCaps {
  private tellPending = false;
  private toldAt = 0;

  constructor(
    private readonly env: Env,
    /** Wait sockets open on this object, waiting, offered or held. */
    private readonly liveSockets: () => number,
    /** HTTP waiters in this object's line. */
    private readonly httpWaiters: () => number,
  ) {}

  /** An HTTP waiter may join the line: undefined, or its refusal. */
  admitWaiter(): RateLimitedError | undefined {
    return this.crowded();
  }

  /** A wait socket may open: undefined, or its refusal (the namespace object is asked; if it cannot answer, yes). */
  async admitSocket(at: SocketAt): Promise<RateLimitedError | undefined> {
    const crowded = this.crowded();
    if (crowded) return crowded;
    const stub = this.namespaceObject(at);
    if (!stub) return undefined;
    const cap = capOf(this.env.MAX_SOCKETS_PER_NAMESPACE, SOCKETS_PER_NAMESPACE_DEFAULT, "MAX_SOCKETS_PER_NAMESPACE");
    try {
      const { ok, total } = await stub.reserveSocket(objectKey(at), this.liveSockets() + 1, cap);
      this.toldAt = Date.now();
      if (!ok) {
        return new RateLimitedError(
          CROWDED_RETRY_MS,
          `this namespace has ${total} wait sockets open, the most it may (${cap}): retry later, or wait over HTTP`,
          "sockets_per_namespace",
        );
      }
    } catch (err) {
      logError(`the namespace object of ${at.ref.ns} did not count a wait socket; letting it open`, err);
    }
    return undefined;
  }

  /**
   * After sockets closed or ended (or now and then while they stay): the
   * namespace object hears this object's count, TELL_AFTER_MS later and once
   * for all that changed meanwhile, so a handoff (a socket's release, the next
   * one's grant) never waits behind the namespace object's storage write.
   */
  tell(at: SocketAt, onlyIfStale = false): void {
    if (onlyIfStale && Date.now() - this.toldAt < TELL_AGAIN_MS) return;
    if (this.tellPending) return;
    const stub = this.namespaceObject(at);
    if (!stub) return;
    this.tellPending = true;
    setTimeout(() => {
      this.tellPending = false;
      (async () => stub.tellSockets(objectKey(at), this.liveSockets()))()
        .then(() => {
          this.toldAt = Date.now();
        })
        .catch((err) => logError(`telling the namespace object of ${at.ref.ns} its wait sockets failed; its count lapses by itself`, err));
    }, TELL_AFTER_MS);
  }

  private crowded(): RateLimitedError | undefined {
    const cap = capOf(this.env.MAX_WAITERS_PER_LOCK, WAITERS_PER_LOCK_DEFAULT, "MAX_WAITERS_PER_LOCK");
    const here = this.liveSockets() + this.httpWaiters();
    if (here < cap) return undefined;
    return new RateLimitedError(CROWDED_RETRY_MS, `this lock has ${here} waiters, the most it takes (${cap}): retry later`, "waiters_per_lock");
  }

  private namespaceObject(at: SocketAt) {
    const namespaces = this.env.NAMESPACE_OBJECT;
    return namespaces ? namespaces.get(namespaces.idFromName(at.ref.ns)) : undefined;
  }
}

/** The lock object's name in its namespace object's socket counts. */
const objectKey = (at: SocketAt): string => `${at.kind}:${at.ref.name}`;

const warned = new Set<string>();

/** A cap from the environment: a positive integer, else the default (a bad value is logged once). */
function capOf(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (Number.isInteger(n) && n > 0) return n;
  if (!warned.has(name)) {
    warned.add(name);
    logError(`${name} is not a positive integer; using ${fallback}`, value);
  }
  return fallback;
}
