import type { Env } from "../env.js";
import { RateLimitedError } from "../errors.js";
import { logError } from "../logError.js";
import { NAMESPACE_PATTERN } from "../limits.js";
import { settingEntries } from "../wire/settingEntries.js";

/**
 * Per-namespace request budgets, counted by the Workers Rate Limiting
 * bindings that wrangler.toml declares, one per tier (a well-kept counter
 * Cloudflare runs, not ours). RATE_LIMIT_TIERS picks a namespace's tier:
 * "shop=high,batch=low,*=standard" ("*": every other namespace; "off": no
 * budget). Unlisted namespaces get "standard". A tier whose binding is not
 * bound (a plain `workerd serve`) does not limit.
 */
const RATE_LIMIT_BINDINGS = {
  low: "RATE_LIMIT_LOW",
  standard: "RATE_LIMIT_STANDARD",
  high: "RATE_LIMIT_HIGH",
} as const;
export type Tier = keyof typeof RATE_LIMIT_BINDINGS | "off";

/** Every tier's window, as wrangler.toml declares it (Cloudflare allows 10 or 60 s). */
const RATE_LIMIT_PERIOD_MS = 10_000;

export function tierOf(config: string | undefined, ns: string): Tier {
  const tiers = tiersOf(config ?? "");
  return tiers.byNamespace.get(ns) ?? tiers.fallback;
}

/** RATE_LIMIT_TIERS parsed: the first tier named for each namespace, and "*"'s (the last one named). */
interface Tiers {
  byNamespace: Map<string, Tier>;
  fallback: Tier;
}

/** Parsed once per isolate and setting, not on every request (the setting changes only with a deploy). */
let parsedTiers: { config: string; tiers: Tiers } | undefined;

function tiersOf(config: string): Tiers {
  if (parsedTiers?.config === config) return parsedTiers.tiers;
  const tiers: Tiers = { byNamespace: new Map(), fallback: "standard" };
  for (const entry of config.split(",")) {
    const [owner, tier] = entry.split("=").map((s) => s.trim());
    if (!isTier(tier)) continue;
    if (owner === "*") tiers.fallback = tier;
    else if (!tiers.byNamespace.has(owner)) tiers.byNamespace.set(owner, tier);
  }
  parsedTiers = { config, tiers };
  return tiers;
}

/** What is wrong with RATE_LIMIT_TIERS (its first bad entry, by position, which is skipped), or undefined. */
export function rateLimitTiersProblem(config: string | undefined): string | undefined {
  const entries = settingEntries(config);
  for (const [i, entry] of entries.entries()) {
    const [owner, tier, ...rest] = entry.split("=").map((s) => s.trim());
    if (!owner || rest.length || (owner !== "*" && !NAMESPACE_PATTERN.test(owner)) || !isTier(tier)) {
      return `RATE_LIMIT_TIERS entry ${i + 1} of ${entries.length} is not namespace=tier (or *=tier) with a tier of low, standard, high or off`;
    }
  }
  return undefined;
}

const isTier = (t: string | undefined): t is Tier => t === "off" || (t !== undefined && t in RATE_LIMIT_BINDINGS);

/**
 * Counts one request against the namespace's budget; over it, RateLimitedError
 * with the time left in the window (the binding says no more than yes or no).
 * A limiter that fails lets the request through: a broken counter must not
 * take the locks down with it. `tier`: the namespace's, when the caller
 * already knows it (a wait socket's object is told it by the Worker).
 */
export async function checkRateLimit(env: Env, ns: string, tier: Tier = tierOf(env.RATE_LIMIT_TIERS, ns), now = Date.now()): Promise<void> {
  if (tier === "off") return;
  const limiter = env[RATE_LIMIT_BINDINGS[tier]];
  if (!limiter) return;
  let success: boolean;
  try {
    ({ success } = await limiter.limit({ key: ns }));
  } catch (err) {
    logError(`rate limiter ${RATE_LIMIT_BINDINGS[tier]} failed; letting the request through`, err);
    return;
  }
  if (!success) {
    throw new RateLimitedError(
      RATE_LIMIT_PERIOD_MS - (now % RATE_LIMIT_PERIOD_MS),
      `this API key's namespace is over its request budget (${tier} tier); retry after the window ends`,
    );
  }
}
