import {
  FLOW,
  FLOW_COUNT_MAX,
  FLOW_WINDOW_MAX_MS,
  FLOW_WINDOW_MIN_MS,
  type FlowGrant,
  type FlowLimit as Limit,
  type FlowState,
  limitMismatchMessage,
} from "../kinds/flow/types.js";
import type { Redis } from "@upstash/redis";
import { ConflictError, InvalidInputError, LeaseLostError } from "../errors.js";
import type { LockStore } from "../store/types.js";
import { newOwnerToken, newRequestId } from "../tokens.js";
import { checkInt, checkToken } from "../validation.js";
import { holding } from "./holding.js";
import { LibraryLock, type LibraryLockOptions, leaseAsked } from "./LibraryLock.js";

export interface FlowLimitOptions extends LibraryLockOptions {
  /** At most this many slots held at once (1 .. 10_000). */
  concurrency?: number;
  /** At most `count` (1 .. 10_000) grants in any window of `perMs` (1_000 .. 86_400_000). */
  rate?: { count: number; perMs: number };
}

export interface SlotAcquireOptions {
  /** 100 .. 86_400_000, as in the HTTP contract. */
  ttlMs: number;
  /** How long to keep trying, ms (0 up to 2^31 - 1, LIBRARY_WAIT_MAX_MS); 0 tries once. */
  waitMs?: number;
  signal?: AbortSignal;
}

/** The limit as given, checked with the HTTP contract's bounds (an InvalidInputError naming the field). */
function checkLimit(options: FlowLimitOptions): Limit {
  const { concurrency, rate } = options;
  if (concurrency === undefined && rate === undefined) throw new InvalidInputError("invalid_body", "concurrency or rate is required");
  if (rate !== undefined && (rate === null || typeof rate !== "object")) throw new InvalidInputError("invalid_body", "rate must be { count, perMs }");
  return {
    ...(concurrency === undefined ? {} : { concurrency: checkInt("invalid_body", "concurrency", concurrency, 1, FLOW_COUNT_MAX) }),
    ...(rate === undefined
      ? {}
      : {
          rate: {
            count: checkInt("invalid_body", "rate.count", rate.count, 1, FLOW_COUNT_MAX),
            perMs: checkInt("invalid_body", "rate.perMs", rate.perMs, FLOW_WINDOW_MIN_MS, FLOW_WINDOW_MAX_MS),
          },
        }),
  };
}

/**
 * A flow limit over any store (docs/API.md "Flow limit"): at most
 * `concurrency` slots held and at most `rate.count` starts in any window of
 * `rate.perMs`, each slot a lease of its own. As a library:
 * `new FlowLimit(redis, "shop-api", { concurrency: 4, rate: { count: 120, perMs: 60_000 } })`
 * with an @upstash/redis client. A wait polls the store (the library has no
 * lock object to wake it), never sooner than the store's retryAfterMs says.
 *
 * Errors: LockedError when no slot is granted within waitMs, LeaseLostError
 * for a token that holds nothing, ConflictError with code `limit_mismatch`
 * when the limit in force is another one (waiting would not help).
 */
export class FlowLimit extends LibraryLock<typeof FLOW> {
  readonly limit: Limit;

  constructor(redisOrStore: Redis | LockStore, name: string, options: FlowLimitOptions) {
    if (options === null || typeof options !== "object") throw new InvalidInputError("invalid_body", "options with concurrency or rate are required");
    super(FLOW, redisOrStore, name, options);
    this.limit = checkLimit(options);
  }

  /** Takes a slot as one new holder, trying again (no sooner than the store says) up to waitMs. */
  async acquire(options: SlotAcquireOptions): Promise<FlowGrant> {
    const { ttlMs, waitMs } = leaseAsked(options);
    // One token for every attempt: a repeated attempt whose first answer was lost is this acquire's own grant (no second start).
    const token = newOwnerToken();
    return this.grantWithin(
      waitMs,
      async () => {
        const r = await this.ops.acquire(this.ref, { token, ...this.limit, ttlMs, watch: false });
        if (r.status === "granted") return { done: true as const, value: r.grant };
        if (r.status === "busy") return { done: false as const, retryAfterMs: r.retryAfterMs, reason: r.reason };
        throw new ConflictError("limit_mismatch", limitMismatchMessage(r.limit, this.limit));
      },
      options.signal,
      (busy) => `no slot: ${busy.reason === "rate" ? "the rate is used up" : "every slot is held"}`,
    );
  }

  /** Gives the slot back (its start stays counted in the window). */
  async release(token: string): Promise<{ released: true; held: number }> {
    const r = await this.ops.release(this.ref, { token: checkToken(token), requestId: newRequestId() });
    if (r.status === "lost") throw new LeaseLostError();
    return { released: true, held: r.held };
  }

  inspect(): Promise<FlowState> {
    return this.ops.inspect(this.ref);
  }

  /** Runs fn holding a slot and gives it back afterwards, even when fn throws. */
  async withSlot<T>(options: SlotAcquireOptions, fn: (grant: FlowGrant) => Promise<T>): Promise<T> {
    return holding(await this.acquire(options), (token) => this.release(token), fn);
  }
}
