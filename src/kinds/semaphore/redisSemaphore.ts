import { SEMAPHORE } from "./types.js";
import { numberField, optionalNumberField, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import { okOrLost } from "../../store/redis/watchedResults.js";
import {
  acquireArgs,
  admitArgs,
  admittedOf,
  entryNumber,
  entryString,
  grantedOrBusy,
  holdersOnRedis,
  labelsOf,
  leaseOf,
} from "../manyHolders/redisHolders.js";
import { semaphoreKeys } from "./keys.js";
import type { OwnOps } from "../manyHolders/types.js";
import type { SemaphoreGrant, SemaphoreOps } from "./types.js";

/** A grant as a script answers it (an acquire's reply, or an entry of a step's list). */
const grantOf = (name: string, entry: Record<string, unknown>): SemaphoreGrant => ({
  name,
  token: entryString(entry, "token"),
  permits: entryNumber(entry, "permits"),
  limit: entryNumber(entry, "limit"),
  ...leaseOf(entry),
  available: entryNumber(entry, "available"),
});

/** The semaphore's own operations on the Redis store: lua/semaphore/<op>.lua. */
function redisSemaphore(scripts: ScriptRunner): OwnOps<SemaphoreOps> {
  return {
    async acquire(ref, input) {
      const k = semaphoreKeys(ref);
      const r = await scripts.run("semaphore_acquire", [k.lock, k.fence, k.gate], acquireArgs(input, [input.limit, input.permits]), k.watchers);
      const tried = grantedOrBusy(r, (g) => grantOf(ref.name, g));
      if (tried) return tried;
      if (r.status === "limit_mismatch") return { status: "limit_mismatch", limit: numberField(r, "limit") };
      throw unexpectedReply("semaphore_acquire", r);
    },

    async admit(ref, waiters, more) {
      const k = semaphoreKeys(ref);
      const r = await scripts.run(
        "semaphore_admit",
        [k.lock, k.fence, k.gate],
        admitArgs(waiters, more, (w) => [w.limit, w.permits]),
      );
      return admittedOf(
        "semaphore_admit",
        r,
        (g) => grantOf(ref.name, g),
        (x) => ({ token: entryString(x, "token"), code: "limit_mismatch", message: `the holders use limit ${entryNumber(x, "limit")}` }),
      );
    },

    async release(ref, input) {
      const k = semaphoreKeys(ref);
      const r = await scripts.run("semaphore_release", [k.lock, k.request(input.requestId), k.ended, k.gate], [input.token], k.watchers);
      return okOrLost("semaphore_release", r, () => ({
        permits: numberField(r, "permits"),
        available: numberField(r, "available"),
        watched: r.watched === "1",
        waiters: r.waiters === "1",
      }));
    },

    async inspect(ref) {
      const r = await scripts.run("semaphore_inspect", [semaphoreKeys(ref).lock], []);
      return {
        limit: optionalNumberField(r, "limit"),
        used: numberField(r, "used"),
        holders: numberField(r, "holders"),
        holderLabels: labelsOf(r),
        expiresAt: optionalNumberField(r, "expiresAt"),
      };
    },
  };
}

/** The semaphore on the Redis store: its scripts and keys (in the library's list of kinds and the Worker's), beside the shared holder scripts. */
export const semaphoreOnRedis = holdersOnRedis(SEMAPHORE, semaphoreKeys, redisSemaphore);
