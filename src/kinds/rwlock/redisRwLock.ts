import type { RWLOCK } from "./types.js";
import type { RedisKind } from "../../store/redis/RedisKinds.js";
import { numberField, optionalNumberField, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import { markedIfWatched, okOrLost } from "../../store/redis/watchedResults.js";
import { currentOf, entryNumber, entryString, labelsOf, listField, redisHolderOps } from "../manyHolders/redisHolders.js";
import { rwLockKeys } from "./keys.js";
import type { RwGrant, RwLockOps, RwMode } from "./types.js";

/** The read-write lock on the Redis store: lua/rwlock/<op>.lua, and the shared holder scripts. */
function redisRwLock(scripts: ScriptRunner): RwLockOps {
  return {
    ...redisHolderOps(scripts, rwLockKeys),
    async acquire(ref, input) {
      const k = rwLockKeys(ref);
      const r = await scripts.run(
        "rwlock_acquire",
        [k.lock, k.fence, k.gate, k.request(input.requestId)],
        [input.token, input.mode, input.reenter ? "reenter" : "new", input.ttlMs, input.watch ? "1" : "0", input.holder ?? ""],
        k.watchers,
      );
      switch (r.status) {
        case "granted":
          return markedIfWatched(r, {
            status: "granted",
            grant: {
              name: ref.name,
              token: r.token,
              mode: modeOf(r.mode),
              fence: numberField(r, "fence"),
              ttlMs: numberField(r, "ttlMs"),
              expiresAt: numberField(r, "expiresAt"),
              count: numberField(r, "count"),
            },
          });
        case "busy":
          return { status: "busy", retryAfterMs: numberField(r, "retryAfterMs"), queued: r.queued === "1", ...currentOf(r) };
        case "lost":
        case "upgrade":
          return { status: r.status };
      }
      throw unexpectedReply("rwlock_acquire", r);
    },

    async admit(ref, waiters, more) {
      const k = rwLockKeys(ref);
      const args: Array<string | number> = [more ? "1" : "0", waiters.length];
      for (const w of waiters) args.push(w.token, w.mode, w.ttlMs, w.watch ? "1" : "0", w.markPickup ? "1" : "0", w.holder ?? "");
      const r = await scripts.run("rwlock_admit", [k.lock, k.fence, k.gate], args);
      if (r.status !== "ok") throw unexpectedReply("rwlock_admit", r);
      const granted: RwGrant[] = listField(r, "granted").map((g) => ({
        name: ref.name,
        token: entryString(g, "token"),
        mode: modeOf(entryString(g, "mode")),
        fence: entryNumber(g, "fence"),
        ttlMs: entryNumber(g, "ttlMs"),
        expiresAt: entryNumber(g, "expiresAt"),
        count: entryNumber(g, "count"),
      }));
      const retryAfterMs = optionalNumberField(r, "retryAfterMs");
      return { granted, refused: [], ...(retryAfterMs === null ? {} : { retryAfterMs }) };
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

function modeOf(v: string | undefined): RwMode {
  if (v === "read" || v === "write") return v;
  throw unexpectedReply("rwlock", { mode: String(v) });
}

/** The read-write lock on the Redis store: its scripts and keys (in the library's list of kinds and the Worker's). */
export const rwLockOnRedis: RedisKind<typeof RWLOCK> = {
  name: "rwlock",
  redis: {
    ops: redisRwLock,
    mainKey: (ref) => rwLockKeys(ref).lock,
    watcherKey: (ref) => rwLockKeys(ref).watchers,
  },
};
