import { checkFence, checkResource, checkStoredFence, describe } from "./check.js";
import { FenceInputError, StaleFenceError } from "./errors.js";
import type { FenceClaimer } from "./types.js";

/** What the helper needs of a Durable Object's storage (`ctx.storage`): its transaction. */
export interface FenceStorage {
  transaction<T>(closure: (txn: FenceTransaction) => Promise<T>): Promise<T>;
}

/** The part of a storage transaction the helper and a fenced write use (DurableObjectTransaction has it all). */
export interface FenceTransaction {
  get<T = unknown>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  delete(key: string): Promise<boolean>;
}

/** Where a resource's fence is kept in the object's storage; a resource may not be named like one. */
const FENCE_PREFIX = "holdfast:fence:";

/**
 * Fenced writes for a Durable Object that guards its own state: a write comes
 * with the caller's fence (a request from a lease holder), and is applied only
 * if that fence is at least the highest this resource has seen, checked and
 * written in one storage transaction with the fence recorded, so a throw
 * anywhere rolls all of it back. An older fence gets StaleFenceError and
 * nothing is written. The fence of resource R is the storage key
 * "holdfast:fence:R" (so resources may not start with that).
 *
 * Run twice with the same fence: put, delete and claim leave the same state;
 * write() runs your function again.
 */
export class DurableObjectFence implements FenceClaimer {
  constructor(readonly storage: FenceStorage) {}

  /** Record that `fence` owns `resource` (see FenceClaimer); answers the fence it had before, or null. */
  async claim(resource: string, fence: number): Promise<{ previous: number | null }> {
    return await this.write(resource, fence, (_txn, previous) => ({ previous }));
  }

  /** Store `value` under the key `resource`, if `fence` holds. */
  async put(resource: string, fence: number, value: unknown): Promise<void> {
    if (value === undefined || typeof value === "function" || typeof value === "symbol") {
      throw new FenceInputError("invalid_value", "value", `value must be something storage can keep, got ${describe(value)}`);
    }
    await this.write(resource, fence, (txn) => txn.put(resource, value));
  }

  /** Delete the key `resource`, if `fence` holds; answers whether it was there. Its fence stays. */
  async delete(resource: string, fence: number): Promise<boolean> {
    return await this.write(resource, fence, (txn) => txn.delete(resource));
  }

  /**
   * Run `apply` inside the transaction only if `fence` holds for `resource`:
   * it gets the transaction (write through it, not through storage) and the
   * fence recorded before this one (null for none). If it throws, nothing it
   * wrote and no fence is kept.
   */
  async write<T>(resource: string, fence: number, apply: (txn: FenceTransaction, previous: number | null) => T | Promise<T>): Promise<T> {
    const r = checkResource(resource);
    if (r.startsWith(FENCE_PREFIX)) {
      throw new FenceInputError("invalid_resource", "resource", `resource names starting with ${JSON.stringify(FENCE_PREFIX)} are the fences' own`);
    }
    const f = checkFence(fence);
    return await this.storage.transaction(async (txn) => {
      const stored = await txn.get(FENCE_PREFIX + r);
      const previous = stored === undefined ? null : checkStoredFence(stored, r);
      if (previous !== null && previous > f) throw new StaleFenceError(r, f, previous);
      const answer = await apply(txn, previous);
      if (previous !== f) await txn.put(FENCE_PREFIX + r, f);
      return answer;
    });
  }
}
