import { ELECTION, type ElectionView } from "../kinds/election/types.js";
import type { Redis } from "@upstash/redis";
import { LeaseLostError } from "../errors.js";
import type { MutexGrant } from "../kinds/mutex/types.js";
import { leaderOf } from "../kinds/election/leader.js";
import { checkElectionValue } from "../kinds/election/schemas.js";
import { LOCK_DELAY_MAX_MS } from "../limits.js";
import type { LockStore } from "../store/types.js";
import { newOwnerToken, newRequestId } from "../tokens.js";
import { checkInt, checkToken } from "../validation.js";
import { attemptOf } from "./Mutex.js";
import { LibraryLock, type LibraryLockOptions, leaseAsked } from "./LibraryLock.js";

export type ElectionOptions = LibraryLockOptions;

export interface CampaignOptions {
  /** What the leader says to everyone (an address, an instance id): 1 to 4096 bytes. */
  value: string;
  /** 100 .. 86_400_000, as in the HTTP contract. */
  ttlMs: number;
  /** How long to keep trying, ms; 0 tries once. The library waits by polling (no line: not first come, first led). */
  waitMs?: number;
  /** If this leader's lease lapses (no resign), nobody leads for this long after (0 .. 60 000 ms). */
  lockDelayMs?: number;
  signal?: AbortSignal;
}

/**
 * Leader election over any store (docs/API.md, "Elections"): `new
 * Election(redis, "consumer-eu")` with an @upstash/redis client; the same
 * scripts and keys as the service's, so a library process and the service's
 * clients campaign in one election. Observing needs the service (its lock
 * object pushes the changes); here, `changes` reads the history.
 */
export class Election extends LibraryLock<typeof ELECTION> {
  constructor(redisOrStore: Redis | LockStore, name: string, options: ElectionOptions = {}) {
    super(ELECTION, redisOrStore, name, options);
  }

  /** Leads, or keeps trying up to waitMs; the lease's fence is the term. Throws LockedError when someone else still leads. */
  async campaign(options: CampaignOptions): Promise<MutexGrant> {
    const value = checkElectionValue(options.value);
    const { ttlMs, waitMs } = leaseAsked(options);
    const lockDelayMs =
      options.lockDelayMs === undefined ? undefined : checkInt("invalid_lock_delay", "lockDelayMs", options.lockDelayMs, 0, LOCK_DELAY_MAX_MS);
    const input = { token: newOwnerToken(), mode: "new" as const, ttlMs, requestId: "", watch: false, holder: value, lockDelayMs };
    return this.grantWithin(waitMs, async () => attemptOf(await this.ops.acquire(this.ref, input)), options.signal);
  }

  /** The leader changes its value, keeping its term. Throws LeaseLostError if `token` does not lead. */
  async proclaim(token: string, value: string) {
    const r = await this.ops.proclaim(this.ref, { token: checkToken(token), value: checkElectionValue(value) });
    if (r.status === "lost") throw new LeaseLostError();
    return { term: r.fence, expiresAt: r.expiresAt, position: r.position };
  }

  /** Steps down: whoever campaigns next leads (a service's waiter at once: its lock object is registered). */
  async resign(token: string): Promise<{ resigned: boolean }> {
    const r = await this.ops.release(this.ref, { token: checkToken(token), requestId: newRequestId() });
    if (r.status === "lost") throw new LeaseLostError();
    return { resigned: r.released };
  }

  /** Who leads: value, term, since, expiresAt (nulls when nobody does), and the history's last position. */
  async leader() {
    return leaderOf(await this.ops.observe(this.ref, { since: Number.MAX_SAFE_INTEGER }));
  }

  /** The kept changes after position `since` (the last 64), who leads and the oldest position kept. */
  changes(since = 0): Promise<ElectionView> {
    return this.ops.observe(this.ref, { since: checkInt("invalid_position", "since", since, 0, Number.MAX_SAFE_INTEGER) });
  }
}
