import type { LockObjectRpc } from "./store/durable/LockObjectRpc.js";
import type { NamespaceObjectRpc } from "./store/durable/NamespaceObjectRpc.js";

/** What a Workers Rate Limiting binding offers (declared here so the library's types need no platform types). */
interface RateLimiter {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

/** What a Workers Analytics Engine dataset binding offers (declared here for the same reason). */
interface MetricsDataset {
  writeDataPoint(point: { indexes?: string[]; blobs?: string[]; doubles?: number[] }): void;
}

/** The Worker's bindings and secrets (see wrangler.toml). */
export interface Env {
  /** "namespace=key,namespace2=key2"; unset means every /v1 request is refused. */
  API_KEYS?: string;
  /** Both set: the Redis store through Upstash. Otherwise the Durable store. */
  UPSTASH_REDIS_REST_URL?: string;
  UPSTASH_REDIS_REST_TOKEN?: string;
  /**
   * Both set: a quorum (Redlock) over several Upstash databases, comma-separated
   * and in the same order, an odd number of at least 3. Offers fewer kinds (docs/guarantees.md). Takes
   * precedence over the single-database settings.
   */
  UPSTASH_REDIS_REST_URLS?: string;
  UPSTASH_REDIS_REST_TOKENS?: string;
  /** Scoped tokens' secrets, "ns=secret,ns=older-secret" (32+ characters each; the first signs): src/http/access/scopedTokens.ts. */
  TOKEN_SECRETS?: string;
  /** Origins whose browser pages may call the service, per namespace: "shop=https://app.shop.example" (src/http/access/cors.ts). */
  CORS_ORIGINS?: string;
  /** Signs expiry notifications (HMAC-SHA256). */
  WEBHOOK_SECRET?: string;
  /**
   * Hosts that may receive expiry notifications, per namespace:
   * "shop=hooks.shop.example|*.shop.example,*=hooks.example" ("*": every namespace).
   * Unset: no namespace may use onExpire. See src/wire/onExpireTarget.ts.
   */
  ONEXPIRE_HOSTS?: string;
  /** "1": onExpire may be http://localhost (local development only). */
  ONEXPIRE_ALLOW_HTTP_LOCALHOST?: string;
  /** Request budgets per namespace: "ns=low|standard|high|off,*=standard" (src/admission/rateLimit.ts). */
  RATE_LIMIT_TIERS?: string;
  /** The tiers' Workers Rate Limiting bindings (wrangler.toml [[ratelimits]]). */
  RATE_LIMIT_LOW?: RateLimiter;
  RATE_LIMIT_STANDARD?: RateLimiter;
  RATE_LIMIT_HIGH?: RateLimiter;
  /** The operator console's files (wrangler.toml [assets]; src/http/operator/console.ts). */
  ASSETS?: Fetcher;
  /** Optional Workers Analytics Engine dataset: grants, busy answers, waits, lapses, lease_lost, force releases (docs/metrics.md). */
  METRICS?: MetricsDataset;
  /** Waiters one lock takes at once, sockets and held-open requests together (default 10,000: src/limits.ts; src/lockObject/sockets/socketCaps.ts). */
  MAX_WAITERS_PER_LOCK?: string;
  /** Wait sockets one namespace may have open at once (default 10,000: src/limits.ts). */
  MAX_SOCKETS_PER_NAMESPACE?: string;
  /** New wait and watch sockets per key and per address: the bucket's size and its refill a second (defaults 20 and 10: src/limits.ts). */
  SOCKET_OPEN_BURST?: string;
  SOCKET_OPENS_PER_SECOND?: string;
  /** Bound on one store call in ms (default 2000). */
  STORE_TIMEOUT_MS?: string;
  /** One LockObject per (kind, namespace, name): waiters, watches, and on the Durable store the state. */
  LOCK_OBJECT: DurableObjectNamespace<LockObjectRpc>;
  /** One NamespaceObject per namespace: on the Durable store, its listing and audit log. */
  NAMESPACE_OBJECT: DurableObjectNamespace<NamespaceObjectRpc>;
}
