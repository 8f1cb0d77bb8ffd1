import type { SEMAPHORE } from "./types.js";
import type { RedisKind } from "../../store/redis/RedisKinds.js";
import { numberField, optionalNumberField, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import { markedIfWatched, okOrLost } from "../../store/redis/watchedResults.js";
import { currentOf, entryNumber, entryString, labelsOf, listField, redisHolderOps } from "../manyHolders/redisHolders.js";
import { semaphoreKeys } from "./keys.js";
import type { SemaphoreGrant, SemaphoreOps } from "./types.js";

/** The semaphore on the Redis store: lua/semaphore/<op>.lua, and the shared holder scripts. */
function redisSemaphore(scripts: ScriptRunner): SemaphoreOps {
  return {
    ...redisHolderOps(scripts, semaphoreKeys),
    async acquire(ref, input) {
      const k = semaphoreKeys(ref);
      const r = await scripts.run(
        "semaphore_acquire",
        [k.lock, k.fence, k.gate],
        [input.token, input.limit, input.permits, input.ttlMs, input.watch ? "1" : "0", input.holder ?? ""],
        k.watchers,
      );
      switch (r.status) {
        case "granted":
          return markedIfWatched(r, {
            status: "granted",
            grant: {
              name: ref.name,
              token: r.token,
              permits: numberField(r, "permits"),
              limit: numberField(r, "limit"),
              fence: numberField(r, "fence"),
              ttlMs: numberField(r, "ttlMs"),
              expiresAt: numberField(r, "expiresAt"),
              available: numberField(r, "available"),
            },
          });
        case "busy":
          return { status: "busy", retryAfterMs: numberField(r, "retryAfterMs"), queued: r.queued === "1", ...currentOf(r) };
        case "limit_mismatch":
          return { status: "limit_mismatch", limit: numberField(r, "limit") };
      }
      throw unexpectedReply("semaphore_acquire", r);
    },

    async admit(ref, waiters, more) {
      const k = semaphoreKeys(ref);
      const args: Array<string | number> = [more ? "1" : "0", waiters.length];
      for (const w of waiters) args.push(w.token, w.limit, w.permits, w.ttlMs, w.watch ? "1" : "0", w.markPickup ? "1" : "0", w.holder ?? "");
      const r = await scripts.run("semaphore_admit", [k.lock, k.fence, k.gate], args);
      if (r.status !== "ok") throw unexpectedReply("semaphore_admit", r);
      const granted: SemaphoreGrant[] = listField(r, "granted").map((g) => ({
        name: ref.name,
        token: entryString(g, "token"),
        permits: entryNumber(g, "permits"),
        limit: entryNumber(g, "limit"),
        fence: entryNumber(g, "fence"),
        ttlMs: entryNumber(g, "ttlMs"),
        expiresAt: entryNumber(g, "expiresAt"),
        available: entryNumber(g, "available"),
      }));
      const refused = listField(r, "refused").map((x) => ({
        token: entryString(x, "token"),
        code: "limit_mismatch",
        message: `the holders use limit ${entryNumber(x, "limit")}`,
      }));
      const retryAfterMs = optionalNumberField(r, "retryAfterMs");
      return { granted, refused, ...(retryAfterMs === null ? {} : { retryAfterMs }) };
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

/** The semaphore on the Redis store: its scripts and keys (in the library's list of kinds and the Worker's). */
export const semaphoreOnRedis: RedisKind<typeof SEMAPHORE> = {
  name: "semaphore",
  redis: {
    ops: redisSemaphore,
    mainKey: (ref) => semaphoreKeys(ref).lock,
    watcherKey: (ref) => semaphoreKeys(ref).watchers,
  },
};
