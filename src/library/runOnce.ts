import type { Redis } from "@upstash/redis";
import { InProgressError, LeaseLostError } from "../errors.js";
import type { LockStore } from "../store/types.js";
import { Idempotency, type BeginResult } from "./Idempotency.js";
import { keepLease, leaseClock } from "../wire/keepLease.js";
import { pollForGrant } from "./pollForGrant.js";

export interface RunOnceOptions {
  /** Where the key lives: an @upstash/redis client or a store (one of the two). */
  redis?: Redis;
  store?: LockStore;
  namespace?: string;
  /** fn must finish within this, or it is heartbeated every ttlMs/3 while it runs. */
  ttlMs: number;
  /** How long the result is kept for later callers (default one day). */
  retainMs?: number;
  fingerprint?: string;
  /** How long to wait for another caller's run to finish (default 0: throw InProgressError at once). */
  waitMs?: number;
}

export interface RunOnceContext {
  /** Aborted when the key's lease is lost: stop, another caller may be running fn. */
  signal: AbortSignal;
  /** Strictly grows with every new start of this key: hand it to systems that can reject stale writers. */
  fence: number;
}

/**
 * Runs fn once per key across every caller and instance, and gives every
 * caller its result. The first caller runs fn (heartbeating while it runs)
 * and stores the result; later callers get the stored result without
 * running fn; callers that overlap the run wait up to waitMs for it. If fn
 * throws, the key is failed so a later call can run it again, and the error
 * is rethrown. Callers other than the one that ran fn get the result as JSON
 * (a Date comes back as a string, undefined as null).
 */
export async function runOnce<T>(key: string, fn: (ctx: RunOnceContext) => Promise<T> | T, options: RunOnceOptions): Promise<T> {
  const backend = options.store ?? options.redis;
  if (!backend) throw new TypeError("runOnce needs a redis client or a store");
  const idem = new Idempotency(backend, { namespace: options.namespace });

  // Waiting re-begins rather than inspects: if the running caller fails or
  // vanishes, the waiter that begins next takes the work over.
  let sentAt = leaseClock();
  const attempt = await pollForGrant<BeginResult>(options.waitMs ?? 0, async () => {
    sentAt = leaseClock();
    try {
      return { done: true, value: await idem.begin(key, options) };
    } catch (err) {
      if (err instanceof InProgressError) return { done: false, retryAfterMs: err.retryAfterMs };
      throw err;
    }
  });
  if (!attempt.done) throw new InProgressError(attempt.retryAfterMs);
  const begun = attempt.value;
  if (begun.state === "completed") return begun.response as T;

  const lease = keepLease({
    ttlMs: begun.ttlMs,
    since: sentAt,
    heartbeat: async () => {
      try {
        await idem.heartbeat(key, begun.token);
        return "ok";
      } catch (err) {
        if (err instanceof LeaseLostError) return "lost";
        throw err;
      }
    },
  });
  let result: T;
  try {
    result = await fn({ signal: lease.signal, fence: begun.fence });
  } catch (err) {
    lease.stop();
    // Lost means someone else owns the key now; a store error leaves it to
    // lapse at its deadline. Either way fn's error is the one to report.
    await idem.fail(key, begun.token).catch(() => undefined);
    throw err;
  }
  lease.stop();
  // LeaseLostError here: fn ran but its result was not recorded (the lease
  // lapsed and another caller may be running it).
  await idem.complete(key, begun.token, result);
  return result;
}
