/** Bounds from the HTTP contract; out of range is a 400, never clamped. */
export const TTL_MIN_MS = 100;
export const TTL_MAX_MS = 86_400_000;
export const WAIT_MAX_MS = 60_000;
/**
 * The library's bound on waitMs: it polls Redis from the caller, with no
 * request to outlast, so any wait a timer can hold (2^31 - 1 ms, ~24.8 days);
 * one rule with the SDK, which renews its place past the service's 60 s.
 */
export const LIBRARY_WAIT_MAX_MS = 2_147_483_647;
export const LIMIT_MAX = 10_000;
export const BODY_MAX_BYTES = 64 * 1024;
/** The contract's name pattern, less "." and "..", which no URL can reach (clients resolve them as path steps). */
export const NAME_PATTERN = /^(?!\.\.?$)[A-Za-z0-9._:@+=-]{1,200}$/;
/** The longest name NAME_PATTERN takes. */
export const NAME_MAX_CHARS = 200;
/**
 * A token is at most this many bytes of UTF-8 (the scripts' bound on it):
 * counted in bytes, not characters, so a token of multi-byte characters is a
 * 400 before it reaches the store. Real tokens are `hf_` + 24 base64url.
 */
export const TOKEN_MAX_BYTES = 256;
/** The longest lock-delay an acquire may ask (Consul's cap). */
export const LOCK_DELAY_MAX_MS = 60_000;
/** A holder label's length in characters (UTF-16 units); at most 4 bytes of UTF-8 each, so the scripts check 1,024 bytes. */
export const HOLDER_MAX_CHARS = 256;

// FENCE_KEEP_MS, MUTEX_KEEP_MS, REQUEST_MEMORY_MS, PICKUP_MS,
// REGISTRATION_GRACE_MS and ENDED_KEEP_MS are also constants of the Redis store's Lua scripts
// (tools/gen-lua-scripts.mjs reads them from here): keep them plain numbers.

/**
 * How long the last issued fence is kept after a lock goes idle. The next
 * fence is max(last + 1, store time in microseconds), so once this has passed
 * the clock alone keeps fences increasing; the kept value only matters for
 * grants faster than one per microsecond or a clock stepping back a little.
 */
export const FENCE_KEEP_MS = 7 * 24 * 3600 * 1000;

/**
 * How long a mutex's Redis hash lives past its last grant, heartbeat or
 * handoff: the fence's keep time past the longest lease (TTL_MAX_MS, one
 * day), so the hash outlives every lease, lock-delay and registered waiter,
 * and keeps the last fence at least FENCE_KEEP_MS past the lease's end.
 */
export const MUTEX_KEEP_MS = 8 * 24 * 3600 * 1000;

/**
 * How long the result of a write is remembered under its request id, so a
 * retry of the same request (the Upstash client retries after network errors)
 * gets the same answer instead of counting twice.
 */
export const REQUEST_MEMORY_MS = 120_000;

/** Keys: how long a record (fingerprint, then response) is kept by default and at most. */
export const RETAIN_DEFAULT_MS = 86_400_000;
export const RETAIN_MIN_MS = 1_000;
export const RETAIN_MAX_MS = 2_592_000_000;
export const FINGERPRINT_MAX_CHARS = 256;
/** A stored response's JSON text (a key's completed work), in UTF-8 bytes. */
export const RESPONSE_MAX_BYTES = 65_536;

/**
 * A grant handed to a queued waiter must be picked up within this: its
 * answer delivered to the client, or a first heartbeat, re-entry or release.
 * Otherwise the lock object takes it back, so a waiter whose client is gone
 * holds the lock for at most this long, not for its whole ttlMs.
 */
export const PICKUP_MS = 2000;

/**
 * A waiter registered in the store (so a release hands the lock straight to
 * it) stays registered this long past the lease it waits behind; the lock
 * object renews it while it waits. If the object is gone, the registration
 * lapses on its own and stops holding try-locks back.
 */
export const REGISTRATION_GRACE_MS = 5000;

/**
 * How long the store remembers that a watched lease ended on purpose
 * (released, failed), so a lock object that missed the news does not report
 * it as lapsed.
 */
export const ENDED_KEEP_MS = 600_000;

/** Namespaces become part of storage keys: no ":" and no braces (a Redis hash tag). */
export const NAMESPACE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Wait sockets' limits (docs/API.md, "Limits of a wait socket"): a socket
 * that sends no acquire or watch this long after it opened is closed; a
 * socket may send this many messages a second (and as many at once), with
 * at most one being handled and one waiting behind it.
 */
export const SOCKET_IDLE_MS = 10_000;
export const SOCKET_MESSAGES_PER_SECOND = 20;
/**
 * Waiters one lock takes at once, sockets and held-open requests together (MAX_WAITERS_PER_LOCK overrides).
 * Bench section 9 (`BENCH_ONLY=9 npm run bench`): ~10,000 sockets behind a holder on one lock stay FIFO, and
 * a handoff with them in line takes 1.2-1.4x its time with one waiter (a lock object's short timers share one
 * setTimeout, so the runtime's 10,000 pending timeouts per object no longer bound the line: timers.ts).
 */
export const WAITERS_PER_LOCK_DEFAULT = 10_000;
/** Wait sockets one namespace may have open at once, over all its locks (MAX_SOCKETS_PER_NAMESPACE overrides): room for one full lock. */
export const SOCKETS_PER_NAMESPACE_DEFAULT = 10_000;
/**
 * New wait and watch sockets per key (all of a namespace's scoped tokens count as one key) and per address: a
 * bucket of SOCKET_OPEN_BURST handshakes, refilled at SOCKET_OPENS_PER_SECOND (the Worker variables of the same
 * names override them; docs/API.md, "Limits of a wait socket"). So a client that opens sockets in a loop, or
 * 100 at once, gets the burst and then one every 100 ms, whether or not it ever floods one.
 */
export const SOCKET_OPEN_BURST_DEFAULT = 20;
export const SOCKET_OPENS_PER_SECOND_DEFAULT = 10;
