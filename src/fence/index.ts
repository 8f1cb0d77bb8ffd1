/**
 * holdfast/fence: fences enforced at the resource (docs/fencing.md). A lease's
 * fence only goes up; a resource that remembers the highest fence it has seen
 * can refuse a paused holder's late write. Two verbs for every resource kind:
 * claim (this fence now owns the resource) and a fenced write (applied only if
 * the fence is still the highest, atomically with the check). No Node
 * built-ins: it runs in Workers, Node 20+ and browsers.
 */
export { StaleFenceError, FenceInputError, type FenceInputCode } from "./errors.js";
export { checkFence, checkResource, checkStoredFence, MAX_RESOURCE_BYTES } from "./check.js";
export type { FenceClaimer } from "./types.js";
export { RedisFence, fenceKeyOf, MAX_HSET_FIELDS, type FenceRedis } from "./redis.js";
export { DurableObjectFence, type FenceStorage, type FenceTransaction } from "./durableObject.js";
export { type ClaimOnGrant, checkClaimOnGrant, claimOnGrant } from "./claim.js";
export { PostgresFence, type PostgresFenceOptions } from "./postgres.js";
export { SqliteFence, type SqliteFenceOptions, type SqliteBatch, d1Batch, type D1Like, type D1StatementLike } from "./sqlite.js";
export type { SqlQuery, SqlStatement, SqlValue, SqlRow, FencedRow, FencedUpdateResult } from "./sql.js";
