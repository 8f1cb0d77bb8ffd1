import type { LockRoom } from "./room/LockRoom";
import type { LockStateObject } from "./store/durable/LockStateObject";

/** The Worker's bindings and secrets (see wrangler.toml). */
export interface Env {
  /** "namespace=key,namespace2=key2"; unset means every /v1 request is refused. */
  API_KEYS?: string;
  /** Both set: the Redis store through Upstash. Otherwise the Durable store. */
  UPSTASH_REDIS_REST_URL?: string;
  UPSTASH_REDIS_REST_TOKEN?: string;
  /** Signs expiry notifications (HMAC-SHA256). */
  WEBHOOK_SECRET?: string;
  /** Bound on one store call in ms (default 2000). */
  STORE_TIMEOUT_MS?: string;
  LOCK_STATE: DurableObjectNamespace<LockStateObject>;
  LOCK_ROOM: DurableObjectNamespace<LockRoom>;
}
