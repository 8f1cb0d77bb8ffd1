import { RWLOCK } from "./types.js";
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
import type { OwnOps } from "../manyHolders/types.js";
import { rwLockKeys } from "./keys.js";
import type { RwGrant, RwLockOps, RwMode } from "./types.js";

/** A grant as a script answers it (an acquire's reply, or an entry of a step's list). */
const grantOf = (name: string, entry: Record<string, unknown>): RwGrant => ({
  name,
  token: entryString(entry, "token"),
  mode: modeOf(entry.mode),
  ...leaseOf(entry),
  count: entryNumber(entry, "count"),
});

/** The read-write lock's own operations on the Redis store: lua/rwlock/<op>.lua. */
function redisRwLock(scripts: ScriptRunner): OwnOps<RwLockOps> {
  return {
    async acquire(ref, input) {
      const k = rwLockKeys(ref);
      const r = await scripts.run(
        "rwlock_acquire",
        [k.lock, k.fence, k.gate, k.request(input.requestId)],
        acquireArgs(input, [input.mode, input.reenter ? "reenter" : "new"]),
        k.watchers,
      );
      const tried = grantedOrBusy(r, (g) => grantOf(ref.name, g));
      if (tried) return tried;
      if (r.status === "lost" || r.status === "upgrade") return { status: r.status };
      throw unexpectedReply("rwlock_acquire", r);
    },

    async admit(ref, waiters, more) {
      const k = rwLockKeys(ref);
      const r = await scripts.run(
        "rwlock_admit",
        [k.lock, k.fence, k.gate],
        admitArgs(waiters, more, (w) => [w.mode]),
      );
      return admittedOf("rwlock_admit", r, (g) => grantOf(ref.name, g));
    },

    async release(ref, input) {
      const k = rwLockKeys(ref);
      const r = await scripts.run("rwlock_release", [k.lock, k.request(input.requestId), k.ended, k.gate], [input.token, input.mode], k.watchers);
      return okOrLost("rwlock_release", r, () => ({
        released: r.released === "1",
        mode: modeOf(r.mode),
        count: numberField(r, "count"),
        watched: r.watched === "1",
        waiters: r.waiters === "1",
      }));
    },

    async inspect(ref) {
      const k = rwLockKeys(ref);
      const r = await scripts.run("rwlock_inspect", [k.lock, k.fence], []);
      if (r.mode !== "free" && r.mode !== "read" && r.mode !== "write") throw unexpectedReply("rwlock_inspect", r);
      return {
        mode: r.mode,
        readers: numberField(r, "readers"),
        writer: r.writer === "1",
        fence: optionalNumberField(r, "fence"),
        holderLabels: labelsOf(r),
        expiresAt: optionalNumberField(r, "expiresAt"),
      };
    },
  };
}

function modeOf(v: unknown): RwMode {
  if (v === "read" || v === "write") return v;
  throw unexpectedReply("rwlock", { mode: String(v) });
}

/** The read-write lock on the Redis store: its scripts and keys (in the library's list of kinds and the Worker's), beside the shared holder scripts. */
export const rwLockOnRedis = holdersOnRedis(RWLOCK, rwLockKeys, redisRwLock);
