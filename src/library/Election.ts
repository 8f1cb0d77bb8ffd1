import { ELECTION, type ElectionView } from "../kinds/election/types.js";
import type { Redis } from "@upstash/redis";
import { LeaseLostError, LockedError } from "../errors.js";
import type { MutexGrant } from "../kinds/mutex/types.js";
import { leaderOf } from "../kinds/election/leader.js";
import { checkElectionValue } from "../kinds/election/schemas.js";
import { LOCK_DELAY_MAX_MS } from "../limits.js";
import { kindOps, type LockRef, type LockStore } from "../store/types.js";
import { newOwnerToken, newRequestId } from "../tokens.js";
import { checkInt, checkName, checkNamespace, checkToken, checkTtl, checkWait } from "../validation.js";
import { pollForGrant } from "./pollForGrant.js";
import { storeOf } from "./storeOf.js";

export interface ElectionOptions {
  /** Names live inside a namespace (^[A-Za-z0-9_-]{1,64}$); the library default is "default". */
  namespace?: string;
  /** Bound on each store call in ms (default 2000). */
  timeoutMs?: number;
}

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
export class Election {
  private readonly store: LockStore;
  private readonly ref: LockRef;

  constructor(redisOrStore: Redis | LockStore, name: string, options: ElectionOptions = {}) {
    this.ref = { ns: checkNamespace(options.namespace ?? "default"), name: checkName(name) };
    this.store = storeOf(redisOrStore, options.timeoutMs);
  }

  get name(): string {
    return this.ref.name;
  }

  /** Leads, or keeps trying up to waitMs; the lease's fence is the term. Throws LockedError when someone else still leads. */
  async campaign(options: CampaignOptions): Promise<MutexGrant> {
    const value = checkElectionValue(options.value);
    const ttlMs = checkTtl(options.ttlMs);
    const waitMs = checkWait(options.waitMs ?? 0);
    const lockDelayMs =
      options.lockDelayMs === undefined ? undefined : checkInt("invalid_lock_delay", "lockDelayMs", options.lockDelayMs, 0, LOCK_DELAY_MAX_MS);
    const input = { token: newOwnerToken(), mode: "new" as const, ttlMs, requestId: "", watch: false, holder: value, lockDelayMs };
    const ops = kindOps(this.store, ELECTION);
    const once = async () => {
      const r = await ops.acquire(this.ref, input);
      if (r.status === "granted") return { done: true as const, value: r.grant };
      if (r.status === "lost") throw new LeaseLostError();
      return { done: false as const, retryAfterMs: r.retryAfterMs, current: r.current };
    };
    const result = waitMs === 0 ? await once() : await pollForGrant(waitMs, once, options.signal);
    if (!result.done) throw new LockedError(result.retryAfterMs, undefined, result.current);
    return result.value;
  }

  /** The leader changes its value, keeping its term. Throws LeaseLostError if `token` does not lead. */
  async proclaim(token: string, value: string) {
    const r = await kindOps(this.store, ELECTION).proclaim(this.ref, { token: checkToken(token), value: checkElectionValue(value) });
    if (r.status === "lost") throw new LeaseLostError();
    return { term: r.fence, expiresAt: r.expiresAt, position: r.position };
  }

  /** Extends the leader's lease to ttlMs (default: the campaign's ttl) from the store's now. */
  async heartbeat(token: string, ttlMs?: number) {
    const r = await kindOps(this.store, ELECTION).heartbeat(this.ref, {
      token: checkToken(token),
      ttlMs: ttlMs === undefined ? undefined : checkTtl(ttlMs),
    });
    if (r.status === "lost") throw new LeaseLostError();
    return { expiresAt: r.expiresAt, ttlMs: r.ttlMs, fence: r.fence };
  }

  /** Steps down: whoever campaigns next leads (a service's waiter at once: its lock object is registered). */
  async resign(token: string): Promise<{ resigned: boolean }> {
    const r = await kindOps(this.store, ELECTION).release(this.ref, { token: checkToken(token), requestId: newRequestId() });
    if (r.status === "lost") throw new LeaseLostError();
    return { resigned: r.released };
  }

  /** Who leads: value, term, since, expiresAt (nulls when nobody does), and the history's last position. */
  async leader() {
    return leaderOf(await kindOps(this.store, ELECTION).observe(this.ref, { since: Number.MAX_SAFE_INTEGER }));
  }

  /** The kept changes after position `since` (the last 64), who leads and the oldest position kept. */
  changes(since = 0): Promise<ElectionView> {
    return kindOps(this.store, ELECTION).observe(this.ref, { since: checkInt("invalid_position", "since", since, 0, Number.MAX_SAFE_INTEGER) });
  }
}
