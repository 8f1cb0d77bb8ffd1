import type { LockRef } from "../types.js";

/**
 * The keys every lock kind keeps in Redis, under the hash tag
 * {<tag>:<ns>:<name>} so each script touches one Redis Cluster slot.
 * Namespaces cannot contain ":" or braces (NAMESPACE_PATTERN, checked by the
 * HTTP layer and the library alike) and names cannot contain braces, so no two
 * (namespace, name) pairs share a key.
 */
export function lockKeyBase(tag: string, ref: LockRef) {
  const base = `hf:{${tag}:${ref.ns}:${ref.name}}`;
  return {
    base,
    fence: `${base}:fence`,
    ended: `${base}:ended`,
    /** Exists while the lock object has watch sockets (src/lockObject/sockets/watchMarker.ts); only the Worker's writes pass it. */
    watchers: `${base}:watchers`,
    request: (requestId: string) => `${base}:rq:${requestId}`,
  };
}
