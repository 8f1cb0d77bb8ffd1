import type { Redis } from "@upstash/redis";
import { InvalidInputError } from "../../errors.js";
import type { KindName } from "../kinds.js";
import { ScriptRunner, type ScriptTexts } from "../redis/ScriptRunner.js";
import { type StoreCore, withKinds } from "../types.js";
import { gather, noMajority } from "./majority.js";

export interface QuorumStoreOptions {
  /**
   * Bound on each database's answer in ms (default 2000). An acquire makes at
   * most three rounds (grant, fence, and giving back a grant that fell short),
   * so it answers within three bounds; the other operations within one or two.
   */
  timeoutMs?: number;
}

/** The core quorum's options: also where its scripts' texts come from (ScriptTexts), which the library and the Worker each hand in. */
export interface QuorumStoreCoreOptions extends QuorumStoreOptions {
  scriptTexts: ScriptTexts;
}

/**
 * What a kind brings to a quorum (src/kinds/<kind>/quorum<Kind>.ts): its
 * operations over every database's script runner, joined by majority. A kind
 * a majority of lock records cannot keep honest has none (docs/guarantees.md).
 */
export interface QuorumKind<N extends KindName = KindName, Ops = unknown> {
  readonly name: N;
  readonly quorum: { ops(databases: readonly ScriptRunner[]): Ops };
}

/** A quorum built from the list `L`: one member per kind of it (`store.mutex`). */
export type QuorumStoreOf<L extends readonly QuorumKind[]> = QuorumStoreCore & {
  readonly [K in L[number] as K["name"]]: ReturnType<K["quorum"]["ops"]>;
};

/**
 * Redlock: a store over N independent Redis databases (N odd, at least 3),
 * for when one Redis is not trusted to stay up. A lock stands on a majority;
 * with one of three databases down locks keep working, with two down calls
 * fail with StoreUnavailableError within the bound. It offers the kinds of
 * the list it is handed; the others are absent, so they answer
 * NotSupportedError (HTTP 501, store/types.ts kindOps).
 */
export class QuorumStoreCore implements StoreCore {
  /** Behaves as the Redis store towards the lock objects (state outside them). */
  readonly kind = "redis" as const;
  readonly offers: string;
  readonly size: number;
  private readonly runners: ScriptRunner[];

  constructor(databases: Redis[], kinds: readonly QuorumKind[], options: QuorumStoreCoreOptions) {
    if (databases.length < 3 || databases.length % 2 === 0) {
      throw new InvalidInputError("invalid_quorum", `a quorum needs an odd number of at least 3 Redis databases, got ${databases.length}`);
    }
    // One client listed twice answers twice: a majority of the list would not be a majority of databases.
    if (new Set(databases).size !== databases.length) {
      throw new InvalidInputError("invalid_quorum", "a quorum needs each Redis database once: one client is listed twice");
    }
    this.size = databases.length;
    this.runners = databases.map((redis) => new ScriptRunner(redis, options.scriptTexts, options.timeoutMs));
    this.offers = `a quorum of Redis databases offers the ${kinds.map((k) => k.name).join(", ")} only`;
    withKinds(
      this,
      kinds.map((k) => ({ name: k.name, ops: k.quorum.ops(this.runners) })),
    );
  }

  /** Resolves when a majority answers. */
  async ping(): Promise<void> {
    const majority = Math.floor(this.size / 2) + 1;
    const g = await gather(
      this.size,
      (i) => this.runners[i].ping(),
      (answers) => answers.filter((a) => a.ok).length >= majority,
    );
    if (g.answers.filter((a) => a?.ok).length < majority) throw noMajority("ping", g.answers, majority);
  }
}

/**
 * What is wrong with a quorum's lists of URLs and tokens (UPSTASH_REDIS_REST_URLS and _TOKENS, split
 * at their commas), or undefined: the one answer the Worker refuses to build the store by (503
 * not_configured) and `npm start` and the first log line name (settingsProblems.ts).
 */
export function quorumListProblem(urls: readonly string[], tokens: readonly string[]): string | undefined {
  if (urls.length !== tokens.length || urls.some((u) => !u) || tokens.some((t) => !t)) {
    return `UPSTASH_REDIS_REST_URLS has ${urls.length} entries and UPSTASH_REDIS_REST_TOKENS ${tokens.length}; they must pair up, none empty`;
  }
  if (urls.length < 3 || urls.length % 2 === 0) {
    return `UPSTASH_REDIS_REST_URLS lists ${urls.length} databases; a quorum needs an odd number of at least 3`;
  }
  const twice = databaseListedTwice(urls);
  return twice === undefined ? undefined : `UPSTASH_REDIS_REST_URLS has ${twice} listed twice; each database must count once toward a majority`;
}

/**
 * The first URL of a quorum's list that names a database listed before it (the same origin and
 * path, whatever the case of the host or a trailing slash), or undefined. Each database must be
 * listed once: listed twice, its one answer counts twice, and it alone is a majority of three.
 */
function databaseListedTwice(urls: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const url of urls) {
    let same = url;
    try {
      const u = new URL(url);
      same = `${u.origin}${u.pathname.replace(/\/+$/, "")}`;
    } catch {
      // Not a URL: compared as written (the client refuses it anyway).
    }
    if (seen.has(same)) return url;
    seen.add(same);
  }
  return undefined;
}
