import { MUTEX, type MutexRulesKey } from "./types.js";
import { InternalError } from "../../errors.js";
import type { LinePolicy } from "../../lockObject/line/LinePolicy.js";
import type { OpsOf } from "../../store/kinds.js";
import { type LineSteps, onStores } from "../kindLine.js";
import { newRequestId } from "../../tokens.js";
import type { MutexGrant } from "./types.js";

export interface MutexWaitRequest {
  ttlMs: number;
  /** The lease is watched for onExpire. */
  watch: boolean;
  holder?: string;
  lockDelayMs?: number;
}

/**
 * The mutex's waiting: only the head can be granted. If the lock is held,
 * the store registers the head so the holder's release hands the lock
 * straight to it, and answers how long the holder's lease has left.
 * `key`: the kind whose store operations these are (the mutex's rules serve an election too).
 */
const mutexLineSteps: LineSteps<OpsOf<MutexRulesKey>, MutexWaitRequest, MutexGrant> = {
  batch: 1,

  async admit(ops, ref, waiters, more) {
    const head = waiters[0];
    const r = await ops.acquire(ref, {
      token: head.token,
      mode: "queue",
      ttlMs: head.req.ttlMs,
      requestId: newRequestId(),
      watch: head.req.watch,
      holder: head.req.holder,
      lockDelayMs: head.req.lockDelayMs,
      more,
      markPickup: !head.firstTry,
    });
    if (r.status === "granted") return { granted: [{ token: head.token, grant: r.grant, pickup: !head.firstTry }] };
    if (r.status === "busy") return { granted: [], retryInMs: r.retryAfterMs, ...(r.current ? { current: r.current } : {}) };
    throw new InternalError(`a queued acquire answered ${r.status}`);
  },

  async withdraw(ops, ref, token, reason) {
    return (await ops.withdraw(ref, { token, reason })).status === "revoked";
  },
};

export const mutexLinePolicyOf = (key: MutexRulesKey): LinePolicy<MutexWaitRequest, MutexGrant> => onStores(key, mutexLineSteps);

export const mutexLinePolicy = mutexLinePolicyOf(MUTEX);
